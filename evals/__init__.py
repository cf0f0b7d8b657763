"""ctxpack's evaluation harness (``ctxpack.evals``): the scenario lane, running,
metrics, reports, the gate and tuning. It imports the library (``ctxpack.packer``);
the library never imports it."""
