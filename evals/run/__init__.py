"""Running an eval: the config, the runner (tasks and cells), executors, external packers."""
