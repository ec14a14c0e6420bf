#ifdef PERFCAST_HAVE_HTTPLIB

#include "cli/web_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "cli/api.h"
#include "core/echoed_values.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/private_temp_dir.h"
#include "device/catalog.h"
#include "import/zoo/zoo.h"
#include "runtime/runtime_profile.h"

namespace perfcast::cli {

namespace {

// Commands the API routes serve, and those of them that write an --html page.
constexpr std::array<std::string_view, 5> kApiCommands{"predict", "advise", "compare", "plan", "op"};
constexpr std::array<std::string_view, 5> kPageCommands{"predict", "advise", "compare", "plan", "op"};

// Flags that name a file to read or write: a request never reaches the file system through them.
constexpr std::array<std::string_view, 6> kFileFlags{"html", "out", "configs", "markdown", "prices", "file"};
// Endings of the file names the readers accept (a relative name would be read from the server's folder).
constexpr std::array<std::string_view, 6> kFileEndings{".toml", ".json", ".gz", ".onnx", ".csv", ".html"};

// A request that is refused: its status and one-line message.
struct BadRequest {
  int status;
  std::string message;
};

std::string one_line(std::string_view text) { return escape_control_bytes(text); }

// A string value from a request: an id, a number or a list of them, never something that names a file.
void check_value(const std::string& flag, const std::string& value) {
  const bool path_like = value.find('/') != std::string::npos || value.find('\\') != std::string::npos ||
                         std::any_of(kFileEndings.begin(), kFileEndings.end(),
                                     [&](std::string_view e) { return value.ends_with(e); });
  if (path_like)
    throw InputError(fmt::format("--{} '{}' looks like a file: over HTTP give an id, or upload the file as "
                                 "gpu_file or model_file",
                                 flag, value));
}

void check_options(const nlohmann::json& options) {
  if (!options.is_object()) throw InputError("the request must be a JSON object of flag name to value");
  for (const auto& [key, value] : options.items()) {
    const std::string name = key.starts_with("--") ? key.substr(2) : key;
    if (std::find(kFileFlags.begin(), kFileFlags.end(), name) != kFileFlags.end())
      throw InputError(fmt::format("--{} names a file; perfcast serve reads and writes no file a request names", name));
    if (value.is_string()) check_value(name, value.get<std::string>());
    if (value.is_array())
      for (const auto& v : value)
        if (v.is_string()) check_value(name, v.get<std::string>());
  }
}

// Adds `value` under `key`, turning a repeated key into an array (--dim a=1 --dim b=2).
void add_option(nlohmann::json& options, const std::string& key, const std::string& value) {
  if (value.empty()) return;  // an empty form field is the flag's default
  if (!options.contains(key)) {
    options[key] = value;
  } else {
    if (!options[key].is_array()) options[key] = nlohmann::json::array({options[key]});
    options[key].push_back(value);
  }
}

// The file name an upload is stored under: the name the client gave when it is a plain file name (letters, digits,
// '.', '_', '-'), so that answers name the model as `--model NAME --json` run beside the file does; else model.<ending>.
std::string model_file_name(const std::string& client_name) {
  std::string ending;
  if (client_name.ends_with(".onnx")) ending = ".onnx";
  else if (client_name.ends_with(".json.gz")) ending = ".json.gz";
  else if (client_name.ends_with(".json")) ending = ".json";
  else throw InputError("model_file must be an .onnx file, a config.json or a profiler trace (.json, .json.gz)");
  const bool plain = client_name.size() > ending.size() && client_name.size() <= 128 && client_name[0] != '.' &&
                     std::all_of(client_name.begin(), client_name.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                              c == '_' || c == '-';
                     });
  return plain ? client_name : "model" + ending;
}

// `text` without the private folder's path before the uploads' names: the server's temporary folder is no part of
// an answer (it named the model "/tmp/perfcast-upload-XXXXXX/model.onnx" where --json names the file).
std::string without_upload_dir(std::string text, const std::optional<PrivateTempDir>& uploads) {
  if (!uploads) return text;
  const std::string dir = (uploads->path() / "").string();
  for (std::size_t at = text.find(dir); at != std::string::npos; at = text.find(dir, at)) text.erase(at, dir.size());
  return text;
}

std::string store_upload(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
  const std::filesystem::path path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot store the upload in " + dir.string());
  return path.string();
}

// The request's options; uploads are stored in `uploads` (created on the first one) and named by their path.
nlohmann::json request_options(const httplib::Request& req, std::optional<PrivateTempDir>& uploads) {
  nlohmann::json options = nlohmann::json::object();
  if (req.method == "GET") {
    for (const auto& [key, value] : req.params) add_option(options, key, value);
    check_options(options);
    return options;
  }
  if (req.is_multipart_form_data()) {
    std::vector<std::pair<std::string, std::string>> files;  // flag, stored name
    for (const auto& [field, part] : req.files) {
      if (field == "gpu_file" || field == "model_file") {
        if (part.content.empty()) continue;  // a file input left empty
        files.emplace_back(field == "gpu_file" ? "gpu" : "model",
                           field == "gpu_file" ? std::string("gpu.toml") : model_file_name(part.filename));
        continue;
      }
      if (!part.filename.empty()) throw InputError(fmt::format("unexpected file field '{}' (gpu_file, model_file)", field));
      add_option(options, field, part.content);
    }
    check_options(options);
    for (const auto& [flag, name] : files) {
      if (!uploads) uploads.emplace("perfcast-upload");
      options[flag] = store_upload(uploads->path(), name, req.get_file_value(flag + "_file").content);
    }
    return options;
  }
  if (req.body.empty()) return options;
  // Nesting is refused as it is met, before a hostile body builds a deep tree.
  const int max_depth = input_limits().max_nesting_depth;
  const auto depth_guard = [max_depth](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > max_depth)
      throw InputError(fmt::format("the JSON nests more than {} levels deep (data/limits.toml max_nesting_depth)",
                                   max_depth));
    return true;
  };
  try {
    options = nlohmann::json::parse(req.body, depth_guard, true, false);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(std::string("malformed JSON: ") + e.what());
  }
  check_options(options);
  return options;
}

void set_error(httplib::Response& res, int status, std::string_view message, bool json) {
  res.status = status;
  if (json) res.set_content(nlohmann::json{{"error", one_line(message)}}.dump() + "\n", "application/json");
  else res.set_content(one_line(message) + "\n", "text/plain; charset=utf-8");
}

void run_command(const httplib::Request& req, httplib::Response& res, const std::string& command, bool page) {
  std::optional<PrivateTempDir> uploads;
  try {
    const nlohmann::json options = request_options(req, uploads);
    if (page) res.set_content(without_upload_dir(api::run_html(command, options), uploads), "text/html; charset=utf-8");
    else res.set_content(without_upload_dir(api::run_json(command, options), uploads), "application/json");
  } catch (const InputError& e) {
    set_error(res, 400, without_upload_dir(clip_echoed_values(e.what()), uploads), !page);
  } catch (const std::exception& e) {
    set_error(res, 500, without_upload_dir(std::string("internal error: ") + e.what(), uploads), !page);
  }
}

nlohmann::json catalog_json() {
  nlohmann::json gpus = nlohmann::json::array(), models = nlohmann::json::array(), runtimes = nlohmann::json::array();
  for (const auto& d : gpu_catalog()) gpus.push_back({{"id", d.id}, {"name", d.name}});
  for (const auto& m : zoo()) models.push_back({{"id", m.id}, {"family", m.family}, {"description", m.description}});
  for (const auto& r : runtime_catalog()) runtimes.push_back({{"id", r.id}, {"name", r.name}});
  return {{"gpus", gpus}, {"models", models}, {"runtimes", runtimes}};
}

}  // namespace

struct WebServer::Impl {
  ServeOptions options;
  httplib::Server server;
};

WebServer::WebServer(ServeOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.max_upload_bytes <= 0) options.max_upload_bytes = input_limits().max_upload_bytes;
  impl_->options = options;
  httplib::Server& s = impl_->server;
  // A body past the limit is answered 413 before it is read.
  s.set_payload_max_length(static_cast<std::size_t>(options.max_upload_bytes));
  // cpp-httplib's default sets SO_REUSEPORT on Linux, which lets a second `perfcast serve` bind a port another one
  // listens on and share its requests (socket(7): SO_REUSEPORT). SO_REUSEADDR alone still rebinds a port left in
  // TIME_WAIT by a server just stopped, and refuses one in use.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<void*>(&yes), sizeof(yes));
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(web_app_page(), "text/html; charset=utf-8");
  });
  s.Get("/api/catalog", [](const httplib::Request&, httplib::Response& res) {
    try {
      res.set_content(catalog_json().dump() + "\n", "application/json");
    } catch (const std::exception& e) {
      set_error(res, 500, std::string("internal error: ") + e.what(), true);
    }
  });
  for (const auto command : kApiCommands) {
    const std::string c(command);
    const auto handler = [c](const httplib::Request& req, httplib::Response& res) { run_command(req, res, c, false); };
    s.Get("/api/" + c, handler);
    s.Post("/api/" + c, handler);
  }
  for (const auto command : kPageCommands) {
    const std::string c(command);
    const auto handler = [c](const httplib::Request& req, httplib::Response& res) { run_command(req, res, c, true); };
    s.Get("/page/" + c, handler);
    s.Post("/page/" + c, handler);
  }
  const std::int64_t limit = options.max_upload_bytes;
  // Answers without a body of their own (no route, a body over the limit, a request httplib could not read) get
  // one line saying why.
  s.set_error_handler(httplib::Server::HandlerWithResponse([limit](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const bool api = req.path.starts_with("/api/");
    if (res.status == 413)
      set_error(res, 413,
                fmt::format("the request is larger than the upload limit of {} bytes (data/limits.toml [serve] "
                            "max_upload_bytes)",
                            limit),
                api);
    else if (res.status == 404)
      set_error(res, 404, "no such page (see GET / for the app, /api/<predict|advise|compare|plan|op> for the API)", api);
    else
      set_error(res, res.status, fmt::format("bad request (HTTP {})", res.status), api);
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    set_error(res, 500, "internal error", req.path.starts_with("/api/"));
  });
}

WebServer::~WebServer() { stop(); }

int WebServer::bind() {
  const auto& o = impl_->options;
  const int port = o.port == 0 ? impl_->server.bind_to_any_port(o.host) : (impl_->server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) throw InputError(fmt::format("cannot listen on {}:{} (address in use, or not this machine's)", o.host, o.port));
  return port;
}

void WebServer::listen() { impl_->server.listen_after_bind(); }

void WebServer::stop() {
  if (impl_->server.is_running()) impl_->server.stop();
}

}  // namespace perfcast::cli

#endif  // PERFCAST_HAVE_HTTPLIB
