// perfcast serve: the local web app and JSON API (cli/web_server.h). Optional at build time: without cpp-httplib
// the command says so and exits 2.
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "cli/number_flags.h"
#include "cli/web_server.h"
#include "core/error.h"

namespace perfcast::cli {

Command serve_command() {
  return {"serve",
          "a local web app and JSON API (/api/predict, /api/advise, /api/compare, /api/plan, /api/op) answering as "
          "--json does",
          [](CLI::App& app) {
            struct State {
              std::string host = "127.0.0.1";
              std::string port = "8080";
            };
            auto s = std::make_shared<State>();
            app.add_option("--host", s->host, "address to listen on (0.0.0.0: every interface; the API has no login)")
                ->capture_default_str();
            app.add_option("--port", s->port, "TCP port (0: any free port)")->capture_default_str();
            return std::function<int()>([s]() -> int {
              // A TCP port is a 16-bit field (RFC 793); 0 asks the system for any free one.
              const int port = static_cast<int>(count_flag(s->port, "--port", 0, 65535));
#ifdef PERFCAST_HAVE_HTTPLIB
              WebServer server({s->host, port, 0});
              const int bound = server.bind();
              std::cerr << fmt::format("perfcast: serving http://{}:{}/ (Ctrl-C stops)\n", s->host, bound);
              server.listen();
              return 0;
#else
              throw InputError("serve: this perfcast was built without cpp-httplib (install libcpp-httplib-dev and "
                               "rebuild)");
#endif
            });
          }};
}

}  // namespace perfcast::cli
