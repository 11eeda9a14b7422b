/*
 * Kafka listener throughput with librdkafka (the C client behind kcat, confluent-kafka-python and
 * most non-JVM clients): produce N records of S bytes to partition 0 of a topic (or round robin to
 * its first P partitions, so that each Produce request carries several), or consume them back from
 * the beginning with the simple (group-less) consumer. Prints one JSON line.
 *
 *   rdkafka-bench produce <broker> <topic> <records> <size> [acks] [partitions]
 *   rdkafka-bench txn-produce <broker> <topic> <records> <size> <records per transaction>
 *   rdkafka-bench consume <broker> <topic> <records>

 * txn-produce is a transactional producer (acks=all, idempotent): begin, produce, commit, again;
 * the time includes every commit (EndTxn and its markers).
 *
 * Built by perf/kafka/run.js with: gcc -O2 -o <out> rdkafka-bench.c -lrdkafka
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v) {
  char err[512];
  if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "%s=%s: %s\n", k, v, err);
    exit(2);
  }
}

static long delivered = 0, failed = 0;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  if (m->err) failed++;
  else delivered++;
}

static int produce(const char *broker, const char *topic, long n, int size, const char *acks, long per_txn, int partitions) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", broker);
  set(conf, "acks", acks);
  if (per_txn > 0) set(conf, "transactional.id", "rdkafka-bench");
  set(conf, "linger.ms", "5");
  set(conf, "batch.size", "1000000");
  set(conf, "batch.num.messages", "100000");
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  set(conf, "message.max.bytes", "8000000");
  if (getenv("RDKB_DEBUG")) set(conf, "debug", getenv("RDKB_DEBUG"));
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  rd_kafka_error_t *te;
#define TXN(call)                                                      \
  if ((te = (call)) != NULL) {                                         \
    fprintf(stderr, "%s: %s\n", #call, rd_kafka_error_string(te));    \
    return 1;                                                          \
  }
  if (per_txn > 0) TXN(rd_kafka_init_transactions(rk, 30000));
  char *value = malloc(size);
  for (int i = 0; i < size; i++) value[i] = 'a' + i % 26;
  double t0 = now();
  long txns = 0;
  for (long i = 0; i < n; i++) {
    if (per_txn > 0 && i % per_txn == 0) {
      if (i > 0) TXN(rd_kafka_commit_transaction(rk, 60000));
      TXN(rd_kafka_begin_transaction(rk));
      txns++;
    }
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partitions > 1 ? (int32_t)(i % partitions) : 0), RD_KAFKA_V_VALUE(value, size), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
        return 1;
      }
      rd_kafka_poll(rk, 10);
    }
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  if (per_txn > 0) TXN(rd_kafka_commit_transaction(rk, 60000));
  while (rd_kafka_outq_len(rk) > 0) rd_kafka_poll(rk, 5);
  double t = now() - t0;
  printf("{\"mode\":\"%s\",\"records\":%ld,\"size\":%d,\"seconds\":%.3f,\"delivered\":%ld,\"failed\":%ld,\"transactions\":%ld}\n", per_txn > 0 ? "txn-produce" : "produce", n, size, t, delivered, failed, txns);
  rd_kafka_destroy(rk);
  return failed == 0 ? 0 : 1;
}

static int consume(const char *broker, const char *topic, long n) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", broker);
  set(conf, "fetch.message.max.bytes", "16777216");
  set(conf, "fetch.max.bytes", "67108864");
  set(conf, "receive.message.max.bytes", "100000000");
  set(conf, "queued.max.messages.kbytes", "2097151");
  /* Fetch again while the local queue holds fewer than this: the default (100000) makes a fast
     broker wait for the application to drain each 16 MiB fetch, then for a 1 s re-check. */
  set(conf, "queued.min.messages", "10000000");
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  double t0 = now();
  if (rd_kafka_consume_start(rkt, 0, RD_KAFKA_OFFSET_BEGINNING) == -1) {
    fprintf(stderr, "consume_start: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
    return 1;
  }
  long got = 0;
  long long bytes = 0;
  double first = 0; /* when the first record arrived: the time before it is connection and offset lookup */
  rd_kafka_message_t *batch[10000];
  while (got < n) {
    ssize_t k = rd_kafka_consume_batch(rkt, 0, 1000, batch, 10000);
    if (k < 0) {
      fprintf(stderr, "consume: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
      return 1;
    }
    for (ssize_t i = 0; i < k; i++) {
      if (batch[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (got == 0) first = now();
        got++;
        bytes += batch[i]->len;
      } else if (batch[i]->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        fprintf(stderr, "consume: %s\n", rd_kafka_err2str(batch[i]->err));
        return 1;
      }
      rd_kafka_message_destroy(batch[i]);
    }
    if (now() - t0 > 120) break;
  }
  double end = now();
  printf("{\"mode\":\"consume\",\"records\":%ld,\"bytes\":%lld,\"seconds\":%.3f,\"streamingSeconds\":%.3f}\n", got, bytes, end - t0, end - first);
  rd_kafka_consume_stop(rkt, 0);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return got >= n ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 6 && strcmp(argv[1], "produce") == 0) return produce(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), argc > 6 ? argv[6] : "1", 0, argc > 7 ? atoi(argv[7]) : 1);
  if (argc >= 7 && strcmp(argv[1], "txn-produce") == 0) return produce(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), "all", atol(argv[6]), 1);
  if (argc >= 5 && strcmp(argv[1], "consume") == 0) return consume(argv[2], argv[3], atol(argv[4]));
  fprintf(stderr, "usage: rdkafka-bench produce <broker> <topic> <records> <size> [acks] [partitions] | txn-produce <broker> <topic> <records> <size> <per txn> | consume <broker> <topic> <records>\n");
  return 2;
}
