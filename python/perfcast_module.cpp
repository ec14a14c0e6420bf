// `import perfcast`: the in-process API (src/cli/api.h) for Python. Each function takes the command's flags as
// keyword arguments (batch=32, gpu="a100-sxm4-40gb", checkpointing=True; underscores stand for dashes, so
// max_gpus=8 is --max-gpus 8) or an argv list, runs the command as `perfcast <command> ... --json` does and returns
// that JSON parsed by Python's json module. Bad input raises perfcast.InputError with the CLI's one-line message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/api.h"
#include "core/echoed_values.h"
#include "core/error.h"

namespace py = pybind11;

namespace {

// A keyword argument's value as the API's JSON: str, bool, int, float, None, or a list of those (--dim).
nlohmann::json to_json(const py::handle& v, const std::string& key) {
  if (v.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return v.cast<long long>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  // numpy's integers and floats (a sweep over np.arange): by their __index__ and __float__.
  if (py::hasattr(v, "__index__")) return py::int_(py::reinterpret_borrow<py::object>(v)).cast<long long>();
  if (py::hasattr(v, "__float__")) return py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : v) out.push_back(to_json(item, key));
    return out;
  }
  throw perfcast::InputError(key + " takes a str, int, float, bool, None or a list of them, got " +
                             std::string(py::str(py::type::of(v).attr("__name__"))));
}

// perfcast finds its data beside its executable, which here is Python's. Unless PERFCAST_DATA says otherwise, the
// module's own place names it: a build tree's perfcast-source-data file (build/release/python/../), or an
// installed share/perfcast. Once, under the GIL, before the first call.
void find_data_once() {
  static bool done = false;
  if (done) return;
  done = true;
  if (std::getenv("PERFCAST_DATA")) return;
  const std::filesystem::path dir =
      std::filesystem::path(py::module_::import("perfcast").attr("__file__").cast<std::string>()).parent_path();
  std::ifstream source(dir.parent_path() / "perfcast-source-data");
  std::string data;
  if (source && std::getline(source, data) && std::filesystem::is_directory(data)) {
    setenv("PERFCAST_DATA", data.c_str(), 0);
    return;
  }
  for (const auto& candidate : {dir.parent_path() / "share" / "perfcast", dir / "data"})
    if (std::filesystem::is_directory(candidate)) {
      setenv("PERFCAST_DATA", candidate.c_str(), 0);
      return;
    }
}

// Runs `command` with either an argv list (args) or keyword arguments, and parses its JSON with Python's json.
py::object run(const std::string& command, const py::args& args, const py::kwargs& kwargs) {
  find_data_once();
  std::string text;
  if (args.size() > 1) throw py::type_error("perfcast." + command + "() takes one optional argv list, or keyword arguments");
  if (args.size() == 1) {
    if (kwargs.size() > 0) throw py::type_error("perfcast." + command + "(): give an argv list or keyword arguments, not both");
    const auto argv = args[0].cast<std::vector<std::string>>();
    py::gil_scoped_release unlocked;  // predictions run on worker threads; other Python threads may go on
    text = perfcast::api::run_json(command, argv);
  } else {
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [k, v] : kwargs) {
      std::string key = k.cast<std::string>();
      for (char& c : key)
        if (c == '_') c = '-';
      options[key] = to_json(v, key);
    }
    py::gil_scoped_release unlocked;
    text = perfcast::api::run_json(command, options);
  }
  return py::module_::import("json").attr("loads")(text);
}

}  // namespace

PYBIND11_MODULE(perfcast, m) {
  m.doc() = "perfcast: predicted deep-learning performance on NVIDIA GPUs. Each function returns what "
            "`perfcast <command> ... --json` prints, as Python objects.";
  // perfcast.InputError (a ValueError) carries the message the CLI prints after "perfcast: error: ", its echoed
  // values clipped as the CLI clips them (core/echoed_values.h): a 100 kB id is not a 100 kB exception message.
  static py::exception<perfcast::InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const perfcast::InputError& e) {
      input_error(perfcast::clip_echoed_values(e.what()).c_str());
    }
  });
  for (const std::string command : {"predict", "advise", "compare", "plan", "op", "validate", "trace"}) {
    m.def(command.c_str(), [command](const py::args& args, const py::kwargs& kwargs) { return run(command, args, kwargs); },
          ("`perfcast " + command + " --json`: flags as keyword arguments (or an argv list), the JSON as a dict/list")
              .c_str());
  }
}
