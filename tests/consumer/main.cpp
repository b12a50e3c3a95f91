// Uses the installed oxport core: loads a model, parses its preset, exports to memory.
//   oxport_consumer MODEL.pt PRESET.json
// Prints one line per step; exit code 0 only when every step worked.
#include <oxport/model.h>
#include <oxport/preset.h>

#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: oxport_consumer MODEL.pt PRESET.json\n";
    return 2;
  }
  std::cout << "oxport " << oxport::versions().oxport << "\n";
  auto preset = oxport::loadPreset(argv[2]);
  if (!preset.ok()) {
    std::cerr << preset.error().message() << "\n";
    return 1;
  }
  auto model = oxport::Model::load(argv[1]);
  if (!model.ok()) {
    std::cerr << model.error().message() << "\n";
    return 1;
  }
  std::cout << "model: " << model->info().schema << "\n";
  std::ostringstream onnx;
  auto r = model->exportOnnx(preset->options, oxport::OutputTarget::toStream(onnx));
  if (!r.ok()) {
    std::cerr << r.error().message() << "\n";
    return 1;
  }
  std::cout << "exported " << onnx.str().size() << " bytes, " << r->stats.onnx_nodes << " nodes\n";
  return onnx.str().empty() ? 1 : 0;
}
