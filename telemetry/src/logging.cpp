#include "gpuaas/telemetry/logging.hpp"

#include <google/protobuf/stubs/logging.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace gpuaas::telemetry {
namespace {

// %j: the message escaped for a JSON string, so a log line is always one valid JSON object.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : msg.payload) {
      switch (c) {
        case '"':
          dest.append(std::string_view("\\\""));
          break;
        case '\\':
          dest.append(std::string_view("\\\\"));
          break;
        case '\n':
          dest.append(std::string_view("\\n"));
          break;
        case '\r':
          dest.append(std::string_view("\\r"));
          break;
        case '\t':
          dest.append(std::string_view("\\t"));
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            dest.append(std::string_view(buf));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

// Protobuf's own complaints (a string field that is not UTF-8, in input the intake then
// dead-letters with its reason) join the log at debug level instead of raw lines on stderr, which
// would break a JSON log and let any publisher write there.
void protobuf_to_spdlog(google::protobuf::LogLevel level, const char*, int,
                        const std::string& message) {
  if (level == google::protobuf::LOGLEVEL_FATAL) {
    spdlog::critical("protobuf: {}", message);
  } else {
    spdlog::debug("protobuf: {}", message);
  }
}

}  // namespace

Status setup_logging(const std::string& format, const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return Status::invalid("unknown log level \"" + level + "\"");
  }
  auto logger =
      std::make_shared<spdlog::logger>("gpuaas", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == "json") {
    auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    f->add_flag<JsonMessageFlag>('j').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":"%j"})");
    logger->set_formatter(std::move(f));
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ %v");
  } else {
    return Status::invalid("unknown log format \"" + format + "\" (text or json)");
  }
  logger->set_level(lvl);
  spdlog::set_default_logger(std::move(logger));
  google::protobuf::SetLogHandler(protobuf_to_spdlog);
  return Status::ok();
}

}  // namespace gpuaas::telemetry
