// The trace readers: the real files in the shared test data, and malformed files written here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpuaas/sim/alibaba_trace.hpp"
#include "gpuaas/trace/azure_llm_trace.hpp"

namespace gpuaas::sim {
namespace {
using trace::read_azure_llm;

const std::string kTraces = std::string(GPUAAS_SHARED_DIR) + "/traces/";
const std::string kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
const std::string kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
const std::string kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

// Files written by a test, removed after it.
class TraceTest : public ::testing::Test {
 protected:
  ~TraceTest() override {
    for (const std::string& p : written_) std::remove(p.c_str());
  }
  std::string write(const std::string& content) {
    const std::string path = ::testing::TempDir() + "gpuaas_trace_test_" +
                             std::to_string(::getpid()) + "_" + std::to_string(written_.size()) +
                             ".csv";
    std::ofstream(path, std::ios::binary) << content;
    written_.push_back(path);
    return path;
  }
  static void skip_without(const std::string& path) {
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no trace at " << path;
  }

 private:
  std::vector<std::string> written_;
};

TEST_F(TraceTest, AlibabaPodsOfTheSharedTrace) {
  const std::string path = kTraces + "openb_pod_list_default.csv";
  skip_without(path);
  auto pods = read_alibaba_pods(path);
  ASSERT_TRUE(pods) << pods.status().message();
  ASSERT_EQ(pods->size(), 8152u);
  int64_t none = 0, one = 0, fraction = 0, never_scheduled = 0, requested = 0;
  for (const AlibabaPod& p : *pods) {
    none += p.num_gpu == 0;
    one += p.num_gpu == 1;
    fraction += p.num_gpu == 1 && p.gpu_milli < 1000;
    never_scheduled += !p.scheduled_time.has_value();
    requested += p.gpu_request_milli();
  }
  EXPECT_EQ(none, 1088);
  EXPECT_EQ(one, 6989);
  EXPECT_EQ(fraction, 3078);
  EXPECT_EQ(never_scheduled, 897);
  EXPECT_EQ(requested, 6086800);          // the README's "about 6,087 GPUs"
  const AlibabaPod& second = (*pods)[1];  // openb-pod-0001,6000,12288,1,460,,LS,Running,...
  EXPECT_EQ(second.name, "openb-pod-0001");
  EXPECT_EQ(second.cpu_milli, 6000);
  EXPECT_EQ(second.memory_mib, 12288);
  EXPECT_EQ(second.gpu_request_milli(), 460);
  EXPECT_EQ(second.gpu_spec, "");
  EXPECT_EQ(second.qos, "LS");
  EXPECT_EQ(second.pod_phase, "Running");
  EXPECT_EQ(second.creation_time, 427061);
  EXPECT_EQ(second.deletion_time, 12902960);
  EXPECT_EQ(second.scheduled_time, 427061);
}

TEST_F(TraceTest, AlibabaNodesOfTheSharedTrace) {
  const std::string path = kTraces + "openb_node_list_gpu_node.csv";
  skip_without(path);
  auto nodes = read_alibaba_nodes(path);
  ASSERT_TRUE(nodes) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 1213u);
  int64_t gpus = 0;
  for (const AlibabaNode& n : *nodes) gpus += n.gpus;
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ((*nodes)[0].sn, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].cpu_milli, 64000);
  EXPECT_EQ((*nodes)[0].memory_mib, 262144);
  EXPECT_EQ((*nodes)[0].gpus, 2);
  EXPECT_EQ((*nodes)[0].model, "P100");
}

TEST_F(TraceTest, AzureLlmOfTheSharedTrace) {
  const std::string path = kTraces + "AzureLLMInferenceTrace_conv.csv";
  skip_without(path);
  auto reqs = read_azure_llm(path);  // CRLF, no newline after the last row
  ASSERT_TRUE(reqs) << reqs.status().message();
  EXPECT_EQ(reqs->size(), 19366u);
  EXPECT_EQ(reqs->front().offset_ms, 0);
  EXPECT_EQ(reqs->front().context_tokens, 374);
  EXPECT_EQ(reqs->front().generated_tokens, 44);
  EXPECT_EQ((*reqs)[1].offset_ms, 4314);  // 18:15:50.9951690 - 18:15:46.6805900
  // 18:15:46.68 to 19:14:08.40: about 58 minutes.
  EXPECT_EQ(reqs->back().offset_ms, 3501721);
  EXPECT_EQ(reqs->back().generated_tokens, 183);
}

TEST_F(TraceTest, AlibabaBadCellNamesLineAndColumn) {
  const std::string path = write(kPodHeader + "p0,1000,1024,1,500,,LS,Running,0,10,0\n" +
                                 "p1,1000,1024,x,500,,LS,Running,0,10,0\n");
  auto pods = read_alibaba_pods(path);
  ASSERT_FALSE(pods);
  EXPECT_EQ(pods.status().message(), path + ":3: column 'num_gpu': \"x\" is not an integer");
}

TEST_F(TraceTest, AlibabaRejectsNegativeShortAndOverflowingRows) {
  auto message = [&](const std::string& row) {
    return read_alibaba_pods(write(kPodHeader + row)).status().message();
  };
  EXPECT_NE(message("p,-1,1024,0,0,,BE,Running,0,10,\n")
                .find(":2: column 'cpu_milli': \"-1\" is "
                      "negative"),
            std::string::npos);
  EXPECT_NE(message("p,1,1024,0,0,,BE,Running,0,10\n").find(":2: expected 11 cells, found 10"),
            std::string::npos);
  EXPECT_NE(message("p,1,1024,0,0,,BE,Running,0,99999999999999999999,\n")
                .find("column 'deletion_time': \"99999999999999999999\" is out of range"),
            std::string::npos);
  EXPECT_NE(message("p,1,1024,1,1500,,BE,Running,0,10,\n")
                .find("column 'gpu_milli': 1500 is not in 1..1000 with num_gpu 1"),
            std::string::npos);
  EXPECT_NE(message("p,1,1024,0,0,,,Running,0,10,\n").find("column 'qos': is empty"),
            std::string::npos);
  EXPECT_NE(message("p,1,1024,0,0,,BE,Running,0,10,\n\n")
                .find(":3: expected 11 cells, found 1 "
                      "(empty line)"),
            std::string::npos);
  EXPECT_NE(message("p,1, 1024,0,0,,BE,Running,0,10,\n").find("\" 1024\" is not an integer"),
            std::string::npos);
}

TEST_F(TraceTest, AlibabaHeaderMustBeTheExpectedColumns) {
  const std::string path = write("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1,T4\n");
  auto pods = read_alibaba_pods(path);
  ASSERT_FALSE(pods);
  EXPECT_NE(pods.status().message().find(path + ":1: expected the header \"name,cpu_milli,"),
            std::string::npos);
  EXPECT_NE(pods.status().message().find("found \"sn,cpu_milli,memory_mib,gpu,model\""),
            std::string::npos);
}

TEST_F(TraceTest, EmptyOrMissingFileIsAnError) {
  const std::string empty = write("");
  for (const Status& s : {read_alibaba_pods(empty).status(), read_alibaba_nodes(empty).status(),
                          read_azure_llm(empty).status()}) {
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find(empty + ": empty file, expected the header"), std::string::npos)
        << s.message();
  }
  const std::string missing = ::testing::TempDir() + "gpuaas_trace_test_no_such_file.csv";
  EXPECT_NE(read_alibaba_nodes(missing).status().message().find(missing + ": cannot open"),
            std::string::npos);
  EXPECT_NE(read_azure_llm(missing).status().message().find(missing + ": cannot open"),
            std::string::npos);
}

TEST_F(TraceTest, HeaderOnlyGivesNoRows) {
  auto pods = read_alibaba_pods(write(kPodHeader));
  ASSERT_TRUE(pods) << pods.status().message();
  EXPECT_TRUE(pods->empty());
  auto nodes = read_alibaba_nodes(write("sn,cpu_milli,memory_mib,gpu,model"));  // no newline
  ASSERT_TRUE(nodes) << nodes.status().message();
  EXPECT_TRUE(nodes->empty());
  auto reqs = read_azure_llm(write(kAzureHeader));
  ASSERT_TRUE(reqs) << reqs.status().message();
  EXPECT_TRUE(reqs->empty());
}

TEST_F(TraceTest, CrlfAndByteOrderMarkAndNoFinalNewline) {
  auto nodes = read_alibaba_nodes(
      write("\xEF\xBB\xBFsn,cpu_milli,memory_mib,gpu,model\r\nn0,64000,262144,8,V100M32\r\n"
            "n1,32000,131072,0,\r\nn2,1,2,1,T4"));
  ASSERT_TRUE(nodes) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].model, "V100M32");  // not "V100M32\r"
  EXPECT_EQ((*nodes)[1].model, "");
  EXPECT_EQ((*nodes)[2].model, "T4");
  auto pods = read_alibaba_pods(
      write("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
            "deletion_time,scheduled_time\r\np0,1000,1024,2,1000,V100M16|V100M32,BE,Pending,5,"
            "9,\r\n"));
  ASSERT_TRUE(pods) << pods.status().message();
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0].scheduled_time, std::nullopt);  // the empty last cell, before the CR
  EXPECT_EQ((*pods)[0].gpu_request_milli(), 2000);
  EXPECT_EQ((*pods)[0].gpu_spec, "V100M16|V100M32");
}

TEST_F(TraceTest, GpuRequestInMilli) {
  AlibabaPod p;
  EXPECT_EQ(p.gpu_request_milli(), 0);
  p.gpu_milli = 700;  // no GPU asked: gpu_milli does not count
  EXPECT_EQ(p.gpu_request_milli(), 0);
  p.num_gpu = 1;
  EXPECT_EQ(p.gpu_request_milli(), 700);
  p.num_gpu = 8;
  p.gpu_milli = 1000;
  EXPECT_EQ(p.gpu_request_milli(), 8000);
}

TEST_F(TraceTest, QosClassesAreTenants) {
  EXPECT_EQ(tenant_of_qos("LS"), "latency-sensitive");
  EXPECT_EQ(tenant_of_qos("BE"), "best-effort");
  EXPECT_EQ(tenant_of_qos("Burstable"), "burstable");
  EXPECT_EQ(tenant_of_qos("Guaranteed"), "guaranteed");
  EXPECT_EQ(tenant_of_qos("Other"), "other");
}

TEST_F(TraceTest, AzureOffsetsAreMillisecondsFromTheFirstRow) {
  auto reqs = read_azure_llm(write(kAzureHeader + "2023-11-16 23:59:59.9990000,10,1\r\n" +
                                   "2023-11-17 00:00:01.0004999,20,2\r\n" +
                                   "2023-11-17 00:00:01.5,30,3\r\n" +
                                   "2023-11-17 00:00:01.5,0,0\r\n" + "2024-02-29 00:00:00,1,1"));
  ASSERT_TRUE(reqs) << reqs.status().message();
  ASSERT_EQ(reqs->size(), 5u);
  EXPECT_EQ((*reqs)[0].offset_ms, 0);
  EXPECT_EQ((*reqs)[1].offset_ms, 1001);  // 1001.4999 ms, truncated
  EXPECT_EQ((*reqs)[2].offset_ms, 1501);
  EXPECT_EQ((*reqs)[3].offset_ms, 1501);  // the same time twice is in order
  EXPECT_EQ((*reqs)[3].context_tokens, 0);
  EXPECT_EQ((*reqs)[4].offset_ms, int64_t{104} * 86400 * 1000 + 1);  // across a leap day's month
  EXPECT_EQ((*reqs)[2].context_tokens, 30);
  EXPECT_EQ((*reqs)[2].generated_tokens, 3);
}

TEST_F(TraceTest, AzureBadRowsNameLineAndColumn) {
  auto message = [&](const std::string& rows) {
    return read_azure_llm(write(kAzureHeader + rows)).status().message();
  };
  const std::string ok = "2023-11-16 18:15:46.6805900,374,44\n";
  EXPECT_NE(message(ok + "2023-11-16 18:15:45.0000000,1,1\n")
                .find(":3: column 'TIMESTAMP': \"2023-11-16 18:15:45.0000000\" is earlier than "
                      "the row before it (\"2023-11-16 18:15:46.6805900\")"),
            std::string::npos);
  EXPECT_NE(message(ok + "2023-11-16T18:15:47,1,1\n")
                .find(":3: column 'TIMESTAMP': \"2023-11-16T18:15:47\" is not a timestamp"),
            std::string::npos);
  EXPECT_NE(message("2023-02-30 00:00:00,1,1\n").find(":2: column 'TIMESTAMP'"), std::string::npos);
  EXPECT_NE(message("2023-11-16 18:15:46.,1,1\n").find("is not a timestamp"), std::string::npos);
  EXPECT_NE(message(ok + ok + "2023-11-16 18:15:47,x,1\n")
                .find(":4: column 'ContextTokens': \"x\" is not an integer"),
            std::string::npos);
  EXPECT_NE(message("2023-11-16 18:15:47,1,2147483648\n")
                .find(":2: column 'GeneratedTokens': \"2147483648\" is out of range"),
            std::string::npos);
  EXPECT_NE(message("2023-11-16 18:15:47,1,-2\n").find("\"-2\" is negative"), std::string::npos);
  EXPECT_NE(message("2023-11-16 18:15:47,1\n").find(":2: expected 3 cells, found 2"),
            std::string::npos);
  const std::string wrong_header = write("TIMESTAMP,ContextTokens\n");
  EXPECT_EQ(read_azure_llm(wrong_header).status().message(),
            wrong_header +
                ":1: expected the header \"TIMESTAMP,ContextTokens,GeneratedTokens\", found "
                "\"TIMESTAMP,ContextTokens\"");
}

}  // namespace
}  // namespace gpuaas::sim
