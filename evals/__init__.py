"""ctxpack's evaluation harness: scenarios, metrics, runner, reports, gate."""
