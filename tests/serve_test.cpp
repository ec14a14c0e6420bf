// perfcast serve (src/cli/web_server.h), started in-process on a free port and asked over HTTP with cpp-httplib's
// client as the web page would: the API answers what `perfcast <command> --json` prints, bad requests get a 4xx
// with one line saying why, and the server keeps answering under malformed and concurrent requests.
#ifdef PERFCAST_HAVE_HTTPLIB

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <chrono>
#include <thread>

#include "cli/web_server.h"
#include "cli_runner.h"
#include "test_paths.h"

namespace perfcast {
namespace {

class ServeTest : public test::ScratchDirTest {
 protected:
  ServeTest() : ScratchDirTest("perfcast-serve") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    start({});
  }
  void TearDown() override {
    stop();
    ScratchDirTest::TearDown();
  }

  void start(cli::ServeOptions options) {
    server_ = std::make_unique<cli::WebServer>(options);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->listen(); });
    // Until listen() runs, stop() has nothing to stop: wait for the first answer.
    for (int i = 0; i < 1000; ++i) {
      httplib::Client c("127.0.0.1", port_);
      if (auto r = c.Get("/api/catalog")) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the server never answered";
  }
  void stop() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120, 0);
    return c;
  }
  // The binary's stdout for `perfcast <args> --json`.
  std::string cli_json(const std::string& args) const {
    const test::CliResult r = run(args + " --json");
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    return r.out;
  }
  // The one-line message of an /api error answer.
  static std::string error_of(const httplib::Result& r) {
    const auto j = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.is_object() && j.contains("error")) << r->body;
    const std::string msg = j.is_object() ? j.value("error", std::string()) : r->body;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }

  std::unique_ptr<cli::WebServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(ServeTest, ApiAnswersAsTheCommandLinesJson) {
  auto c = client();
  auto get = c.Get("/api/predict?gpu=gtx-1080-ti&model=resnet152&batch=32&precision=amp");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(get->body, cli_json("predict --gpu gtx-1080-ti --model resnet152 --batch 32 --precision amp"));

  auto post = c.Post("/api/advise", R"({"gpu": "a100-sxm4-40gb", "model": "resnet152", "batch": 64, "gpus": 3})",
                     "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 200);
  EXPECT_EQ(post->body, cli_json("advise --gpu a100-sxm4-40gb --model resnet152 --batch 64 --gpus 3"));

  auto compare = c.Post("/api/compare", R"({"gpu": "gtx-1080-ti:3,a100-sxm4-40gb", "model": "resnet152"})",
                        "application/json");
  ASSERT_TRUE(compare);
  EXPECT_EQ(compare->body, cli_json("compare --gpu gtx-1080-ti:3,a100-sxm4-40gb --model resnet152"));

  // A form, as the page sends it: empty fields are the flags' defaults.
  httplib::MultipartFormDataItems form{{"model", "resnet152", "", ""}, {"deadline", "24h", "", ""},
                                        {"max-gpus", "8", "", ""}, {"batch", "", "", ""}};
  auto plan = c.Post("/api/plan", form);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->body, cli_json("plan --model resnet152 --deadline 24h --max-gpus 8"));

  auto op = c.Get("/api/op?gpu=gtx-1080-ti&op=conv2d&conv-n=32&conv-c=64&conv-h=56&conv-w=56&conv-k=64&conv-r=3&conv-s=3&pad-h=1&pad-w=1");
  ASSERT_TRUE(op);
  EXPECT_EQ(op->body, cli_json("op --gpu gtx-1080-ti --op conv2d --conv-n 32 --conv-c 64 --conv-h 56 --conv-w 56 "
                               "--conv-k 64 --conv-r 3 --conv-s 3 --pad-h 1 --pad-w 1"));
}

TEST_F(ServeTest, PageAndReportPage) {
  auto c = client();
  auto app = c.Get("/");
  ASSERT_TRUE(app);
  EXPECT_EQ(app->status, 200);
  EXPECT_NE(app->body.find("/api/predict"), std::string::npos);
  auto page = c.Get("/page/predict?model=resnet50&batch=16");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  const test::CliResult r = run("predict --model resnet50 --batch 16 --html page.html");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(page->body, test::slurp(dir_ / "page.html"));
}

TEST_F(ServeTest, BadRequestsGetA4xxAndOneLine) {
  auto c = client();
  auto malformed = c.Post("/api/predict", R"({"gpu": "gtx-1080-ti",)", "application/json");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_EQ(error_of(malformed).rfind("malformed JSON", 0), 0u) << malformed->body;

  // 100,000 nested arrays: refused (data/limits.toml max_nesting_depth), not a crash.
  auto deep = c.Post("/api/predict", "{\"dim\": " + std::string(100000, '[') + std::string(100000, ']') + "}",
                     "application/json");
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->status, 400);
  EXPECT_NE(error_of(deep).find("max_nesting_depth"), std::string::npos) << deep->body;

  auto not_object = c.Post("/api/predict", "[1, 2]", "application/json");
  ASSERT_TRUE(not_object);
  EXPECT_EQ(not_object->status, 400);

  auto typo = c.Get("/api/predict?gpu=gtx-1080-tj");
  ASSERT_TRUE(typo);
  EXPECT_EQ(typo->status, 400);
  EXPECT_NE(error_of(typo).find("did you mean 'gtx-1080-ti'"), std::string::npos) << typo->body;

  // No path from a request reaches the file system: flags naming files are refused, and so are ids that look
  // like files (a relative name would be read from the server's folder).
  for (const char* q : {"/api/predict?html=page.html", "/api/predict?model=../../etc/passwd",
                        "/api/predict?model=model.onnx", "/api/compare?prices=prices.toml",
                        "/api/predict?gpu=gpu.toml", "/page/predict?out=x.csv"}) {
    auto r = c.Get(q);
    ASSERT_TRUE(r) << q;
    EXPECT_EQ(r->status, 400) << q << ": " << r->body;
    EXPECT_EQ(r->body.find('\n'), r->body.size() - 1) << q << ": " << r->body;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "page.html"));

  auto missing = c.Get("/api/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_FALSE(missing->body.empty());

  auto bad_upload = c.Post("/api/predict", httplib::MultipartFormDataItems{{"model_file", "x", "weights.bin", ""}});
  ASSERT_TRUE(bad_upload);
  EXPECT_EQ(bad_upload->status, 400);

  // Still answering after all that.
  auto ok = c.Get("/api/predict?model=resnet50&batch=8");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServeTest, UploadsArePredictedAndTheirFilesRemoved) {
  auto c = client();
  // A GPU file: the catalog's own GTX 1080 Ti, uploaded, predicts as the id does.
  const std::string gpu_toml = test::slurp(std::filesystem::path(PERFCAST_SOURCE_DIR) / "data/gpus/gtx-1080-ti.toml");
  ASSERT_FALSE(gpu_toml.empty());
  auto by_file = c.Post("/api/predict", httplib::MultipartFormDataItems{{"gpu_file", gpu_toml, "my-card.toml", ""},
                                                                        {"model", "resnet50", "", ""},
                                                                        {"batch", "32", "", ""}});
  ASSERT_TRUE(by_file);
  ASSERT_EQ(by_file->status, 200) << by_file->body;
  const auto by_id = nlohmann::json::parse(cli_json("predict --gpu gtx-1080-ti --model resnet50 --batch 32"));
  const auto uploaded = nlohmann::json::parse(by_file->body);
  EXPECT_DOUBLE_EQ(uploaded["step_ms"].get<double>(), by_id["step_ms"].get<double>());

  // A Hugging Face config.json: the same numbers as the CLI given the file (the model field names the file).
  const std::string config = R"({"model_type":"bert","hidden_size":256,"num_hidden_layers":4,"num_attention_heads":4,)"
                             R"("intermediate_size":1024,"vocab_size":30522,"max_position_embeddings":512})";
  test::write_text(dir_ / "config.json", config);
  auto hf = c.Post("/api/predict", httplib::MultipartFormDataItems{{"model_file", config, "config.json", ""},
                                                                   {"batch", "8", "", ""}, {"seq", "128", "", ""}});
  ASSERT_TRUE(hf);
  ASSERT_EQ(hf->status, 200) << hf->body;
  // The answer is the CLI's --json byte for byte, the model named as the client named its file: it used to name
  // the server's private folder (/tmp/perfcast-upload-XXXXXX/model.json).
  EXPECT_EQ(hf->body, cli_json("predict --model config.json --batch 8 --seq 128"));
  EXPECT_EQ(hf->body.find("perfcast-upload-"), std::string::npos);
  // An error about an upload names it the same way.
  auto no_seq = c.Post("/api/predict", httplib::MultipartFormDataItems{
                                           {"model_file", test::slurp(std::filesystem::path(PERFCAST_SOURCE_DIR) /
                                                                      "tests/data/onnx/hf_bert_base_opset14.onnx"),
                                            "bert.onnx", ""}});
  ASSERT_TRUE(no_seq);
  EXPECT_EQ(no_seq->status, 400);
  EXPECT_NE(no_seq->body.find("'bert.onnx'"), std::string::npos) << no_seq->body;
  EXPECT_EQ(no_seq->body.find("perfcast-upload-"), std::string::npos) << no_seq->body;
  // The upload folders are gone once answered.
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    EXPECT_EQ(e.path().filename().string().rfind("perfcast-upload-", 0), std::string::npos) << e.path();
}

TEST_F(ServeTest, OversizeUploadIs413) {
  stop();
  cli::ServeOptions small;
  small.max_upload_bytes = 4096;
  start(small);
  auto c = client();
  auto r = c.Post("/api/predict", httplib::MultipartFormDataItems{{"model_file", std::string(64 * 1024, 'x'),
                                                                   "config.json", ""}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("max_upload_bytes"), std::string::npos) << r->body;
  auto ok = c.Get("/api/predict?model=resnet50&batch=8");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServeTest, ConcurrentRequestsEachGetTheirOwnAnswer) {
  // Each thread asks for another batch; every answer must be its own request's (the in-process API captures each
  // request's output separately), whatever else runs at the same time.
  constexpr int kThreads = 8;
  std::vector<std::string> expected(kThreads), got(kThreads);
  std::vector<int> status(kThreads, 0);
  for (int i = 0; i < kThreads; ++i)
    expected[i] = cli_json("predict --model resnet50 --batch " + std::to_string(8 * (i + 1)));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      auto c = client();
      // Malformed requests interleaved with the good ones.
      auto bad = c.Post("/api/predict", "{", "application/json");
      auto r = c.Get(("/api/predict?model=resnet50&batch=" + std::to_string(8 * (i + 1))).c_str());
      if (r) {
        status[i] = bad ? r->status : -1;
        got[i] = r->body;
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(status[i], 200) << i;
    EXPECT_EQ(got[i], expected[i]) << i;
  }
}

}  // namespace
}  // namespace perfcast

#endif  // PERFCAST_HAVE_HTTPLIB
