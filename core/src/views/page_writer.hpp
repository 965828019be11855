// One page of an answer: items appended whole while they fit the reply's budget, so a page is
// always one JSON document and no item is ever split across replies. Shared by the state and
// explain pages.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuaas::core {

class PageWriter {
 public:
  // `budget`: bytes for the items; the page's own fields take a few hundred more.
  explicit PageWriter(std::size_t budget) : budget_(budget > 256 ? budget - 256 : 0) {}
  // False when the item would pass the budget (nothing is added then).
  bool add(const nlohmann::json& item) {
    std::string text = item.dump();
    if (out_.size() + text.size() + 1 > budget_) return false;
    out_ += out_.empty() ? "" : ",";
    out_ += text;
    ++count_;
    return true;
  }
  std::size_t count() const { return count_; }
  // {"section", "items", "next"}: `next` is the cursor of the page after, null at the end.
  std::string finish(const std::string& section, const nlohmann::json& next) const {
    return R"({"section":)" + nlohmann::json(section).dump() + R"(,"items":[)" + out_ +
           R"(],"next":)" + next.dump() + "}";
  }

 private:
  std::size_t budget_;
  std::string out_;
  std::size_t count_ = 0;
};

// The error answer for an item that alone does not fit a reply.
inline std::string item_too_large(const std::string& key, std::size_t bytes, std::size_t budget) {
  return nlohmann::json{{"error", key + " alone is " + std::to_string(bytes) +
                                      " bytes, more than a reply may hold (" +
                                      std::to_string(budget) +
                                      "): raise max_payload on the NATS servers"}}
      .dump();
}

}  // namespace gpuaas::core
