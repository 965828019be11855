#include "jetstream_reply.hpp"

#include <gtest/gtest.h>

namespace gpuaas::bus {
namespace {

TEST(JetStreamReplyTest, V1NineTokens) {
  // $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
  EXPECT_EQ(stream_sequence_from_ack_subject("$JS.ACK.EVENTS.intake.1.42.7.1700000000000000000.3"),
            42u);
  EXPECT_EQ(stream_sequence_from_ack_subject("$JS.ACK.S.C.2.18446744073709551615.1.1.0"),
            UINT64_MAX);
}

TEST(JetStreamReplyTest, DomainTwelveTokens) {
  // $JS.ACK.<domain>.<account>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.<rnd>
  EXPECT_EQ(stream_sequence_from_ack_subject(
                "$JS.ACK.hub.ACCHASH.EVENTS.intake.1.99.5.1700000000000000000.0.Xyz123"),
            99u);
  EXPECT_EQ(stream_sequence_from_ack_subject("$JS.ACK._.A.S.C.3.1234.9.1.0.tok"), 1234u);
  // The random last token may be dropped by later servers (nats.go accepts 11 tokens).
  EXPECT_EQ(stream_sequence_from_ack_subject("$JS.ACK._.A.S.C.3.55.9.1.0"), 55u);
  // Tokens after the twelfth are reserved for future fields and must not break parsing.
  EXPECT_EQ(stream_sequence_from_ack_subject("$JS.ACK._.A.S.C.3.77.9.1.0.tok.more.fields"), 77u);
}

TEST(JetStreamReplyTest, JunkIsZero) {
  for (const char* junk : {
           "",
           "_INBOX.abc.def",
           "$JS.ACK",
           "$JS.ACK.S.C.1.42.7.1",          // 8 tokens
           "$JS.ACK.S.C.1.42.7.1.0.extra",  // 10 tokens: neither form
           "$JS.NAK.S.C.1.42.7.1.0",        // not an ack subject
           "$XS.ACK.S.C.1.42.7.1.0",
           "$JS.ACK.S.C.1.x42.7.1.0",  // sequence not a number
           "$JS.ACK.S.C.1.42x.7.1.0",
           "$JS.ACK.S.C.1..7.1.0",  // empty sequence
           "$JS.ACK.S.C.1.-5.7.1.0",
           "$JS.ACK.S.C.1.99999999999999999999.7.1.0",  // overflows uint64
           "$JS.ACK.D.A.S.C.1.nope.7.1.0.tok",
       }) {
    EXPECT_EQ(stream_sequence_from_ack_subject(junk), 0u) << "'" << junk << "'";
  }
}

}  // namespace
}  // namespace gpuaas::bus
