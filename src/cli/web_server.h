// perfcast serve: a local web app (one page, served from memory) and a JSON API over the in-process API
// (cli/api.h), with cpp-httplib. Built only when cpp-httplib was found (PERFCAST_HAVE_HTTPLIB).
//
//   GET  /                      the page
//   GET  /api/catalog           GPU, model and runtime ids for the page's forms
//   GET|POST /api/<command>     predict, advise, compare, plan, op: exactly `perfcast <command> --json`
//   GET|POST /page/<command>    the page `perfcast <command> --html FILE` writes (predict, advise, compare, plan, op)
//
// Options come as query parameters, a JSON object (POST, application/json) or a multipart form whose files
// gpu_file (a GPU .toml) and model_file (.onnx, config.json, profiler trace .json / .json.gz) are written under
// fixed names into a private temporary folder for the one request. No name or path from a request reaches the
// file system: flags that name files are refused and ids may not look like paths. Bad requests get a 4xx and a
// one-line message ({"error": "..."} on /api); requests run on cpp-httplib's thread pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace perfcast::cli {

struct ServeOptions {
  std::string host = "127.0.0.1";   // the address to listen on
  int port = 0;                      // 0: any free port (bind() says which)
  std::int64_t max_upload_bytes = 0; // largest request body; 0: data/limits.toml [serve] max_upload_bytes
};

class WebServer {
 public:
  explicit WebServer(ServeOptions options);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds host:port and returns the port; InputError when the address cannot be bound.
  int bind();
  // Serves requests until stop(); returns afterwards.
  void listen();
  // Stops listen() (from another thread or a signal handler's thread).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The web app's single page (src/cli/web_page.cpp).
const std::string& web_app_page();

}  // namespace perfcast::cli
