/*
 * Example native source for svc-connectors: produces {"n":0}, {"n":1}, … up to `count` records
 * (plugin_config, default 100), keyed "k<n>", with the next n as its checkpoint.
 *
 * Build (the SDK header ships in the runtime's sdk/ directory):
 *   gcc -shared -fPIC -O2 -Wall -Wextra -I <runtime dir>/sdk -o libsvc_connector_ticker_source.so ticker_source.c
 *
 * The contract this file follows (docs/connectors.md "Writing a plugin"):
 * - One instance per `id`; every call for an id comes from one thread, one call at a time.
 * - svc_source_poll returns at most max_records records. `timeout_ms` is how long the call may
 *   wait for data when it has none: return a batch as soon as there is one, or SVC_POLL_NO_DATA
 *   when there is none (at once or after waiting; the runtime waits the rest of poll_interval).
 *   Taking longer than timeout_ms + plugin_timeout counts as a hang.
 * - After a nack (svc_source_commit with ack = 0) the next poll returns the same records again;
 *   after open() with a checkpoint, records follow it in the same order with the same keys.
 */
#include <svc_connector.h>
#include <stdio.h>
#include <stdlib.h>

SVC_CONNECTOR_SDK_MARKER

#define MAX_INSTANCES 64

static struct {
  uint64_t next, pending, count;
  int has_pending;
} inst[MAX_INSTANCES];

/* The value of "count" in the JSON config, or `d`. A real plugin would use a JSON parser. */
static uint64_t config_count(const uint8_t *config, uint32_t len, uint64_t d) {
  char buf[512];
  uint32_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
  memcpy(buf, config, n);
  buf[n] = 0;
  const char *p = strstr(buf, "\"count\":");
  return p == NULL ? d : strtoull(p + 8, NULL, 10);
}

int32_t svc_source_open(uint32_t id, const uint8_t *config, uint32_t config_len, const uint8_t *state, uint32_t state_len, svc_log_fn log) {
  if (id >= MAX_INSTANCES) return SVC_PERMANENT;
  inst[id].count = config_count(config, config_len, 100);
  inst[id].next = 0;
  if (state_len == 8) memcpy(&inst[id].next, state, 8);
  inst[id].has_pending = 0;
  if (log) log(id, SVC_LOG_INFO, "ticker source opened");
  return SVC_OK;
}

int32_t svc_source_poll(uint32_t id, uint8_t *out, uint32_t cap, uint32_t *out_len, uint32_t max_records, uint32_t timeout_ms) {
  (void)timeout_ms; /* never waits: no data means SVC_POLL_NO_DATA at once */
  uint64_t from = inst[id].next, to = from + max_records;
  if (to > inst[id].count) to = inst[id].count;
  if (from >= to) return SVC_POLL_NO_DATA;
  svc_source_writer w;
  svc_source_begin(&w, out, cap, (const uint8_t *)&to, 8);
  for (uint64_t n = from; n < to; n++) {
    char k[32], v[64];
    int kl = snprintf(k, sizeof k, "k%llu", (unsigned long long)n);
    int vl = snprintf(v, sizeof v, "{\"n\":%llu}", (unsigned long long)n);
    svc_source_add(&w, (const uint8_t *)k, (uint32_t)kl, (const uint8_t *)v, (uint32_t)vl);
  }
  /* SVC_POLL_TOO_SMALL: the runtime calls again with a buffer of *out_len bytes. */
  int32_t rc = svc_source_end(&w, out_len);
  if (rc == SVC_POLL_BATCH) {
    inst[id].pending = to;
    inst[id].has_pending = 1;
  }
  return rc;
}

int32_t svc_source_commit(uint32_t id, int32_t ack) {
  if (ack && inst[id].has_pending) inst[id].next = inst[id].pending;
  inst[id].has_pending = 0;
  return SVC_OK;
}

int32_t svc_source_close(uint32_t id) {
  (void)id;
  return SVC_OK;
}

uint32_t svc_last_error(uint32_t id, char *buf, uint32_t cap) {
  (void)id;
  (void)buf;
  (void)cap;
  return 0;
}
