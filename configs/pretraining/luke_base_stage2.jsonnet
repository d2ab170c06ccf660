// LUKE base pretraining, stage 2 of 2 (paper Appendix A; configs/lib/pretraining.libsonnet): every parameter
// is trained, for 100K steps at peak lr 1e-5, starting from the stage-1 archive (optimizer and schedule
// start afresh). Then `allennlp export-luke OUTPUT/model.tar.gz LUKE_DIR` gives a transformers checkpoint.
// Set: STAGE1_ARCHIVE (the model.tar.gz of a luke_base_stage1.jsonnet run),
//      CORPUS (the corpus directory of stage 1, or its directories joined by commas).
// Devices and batches as in luke_base_stage1.jsonnet.
local lib = import '../lib/pretraining.libsonnet';
lib.config(
  { type: 'from_archive', archive_file: std.extVar('STAGE1_ARCHIVE') },
  std.extVar('CORPUS'),
  lr=1e-5,
  steps=100000,
  seed=13371,  // other masks than stage 1's
)
