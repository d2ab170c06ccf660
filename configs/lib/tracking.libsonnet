// The trainer's trackers, chosen by the environment: LUKE_TRACKING=tensorboard,mlflow,wandb (any of them, comma-
// separated; unset or empty: none), each with its defaults (docs/training.md, "Tracking"). With parameters, set the
// trainer's callbacks instead: -o '{"trainer.callbacks": [{"type": "mlflow", "tracking_uri": "http://host:5000"}]}'.
local trackers = ['tensorboard', 'mlflow', 'wandb'];
{
  callbacks(names=std.extVar('LUKE_TRACKING')):: [
    assert std.member(trackers, name) : 'LUKE_TRACKING names ' + name + ': the trackers are ' + std.join(', ', trackers);
    { type: name }
    for name in [std.stripChars(n, ' ') for n in std.split(names, ',')]
    if name != ''
  ],
}
