/*
 * svc_connector.h — the C ABI of svc-connectors plugins, SDK 1.0. Header-only: include it in
 * one .c file of the plugin and put SVC_CONNECTOR_SDK_MARKER at file scope.
 *
 * Rules (docs/connectors.md, "C ABI"):
 *  - plain C, fixed-width integers, every symbol prefixed svc_;
 *  - buffers are (pointer, length) pairs owned by the host; a plugin never keeps a pointer
 *    past the call that passed it;
 *  - state is kept per instance id: one library is loaded once per process and shared by
 *    every connector that uses it, so a plugin must not keep per-connector state in globals;
 *  - the host serialises all calls of one instance (calls of different ids may overlap only
 *    with isolation = "in_process" and several connectors; keep shared data thread-safe);
 *  - return 0 for success, a negative number for failure, and make svc_last_error() say why.
 *  - the SDK marker: a plugin built against another SDK lacks svc_connector_sdk_v1_0 and fails
 *    to load with a symbol error.
 *
 * Batch layout, all integers little-endian:
 *   sink batch   : u32 count, then count records of
 *                  u16 topic_len, topic, i32 partition, i64 offset, i64 timestamp_ms,
 *                  i32 key_len (-1 = no key), key, u32 value_len, value,
 *                  then, only when some record has headers, u32 0x48435653 ("SVCH") and per
 *                  record u16 header_count, then per header u16 name_len, name, u32 value_len,
 *                  value (after the records, so readers that stop at `count` are unaffected)
 *   sink results : one u8 per record: 0 ok, 1 retryable, 2 permanent
 *   source batch : u32 count, u32 state_len, state, then count records of
 *                  i32 key_len (-1 = no key), key, u32 value_len, value,
 *                  then, only when some record has headers, the same "SVCH" trailer as a
 *                  sink batch (svc_source_add_h writes it; svc_source_add records have none)
 */
#ifndef SVC_CONNECTOR_H
#define SVC_CONNECTOR_H

#include <stdint.h>
#include <string.h>

#define SVC_CONNECTOR_SDK_MAJOR 1
#define SVC_CONNECTOR_SDK_MINOR 0
/* Exactly one translation unit of a plugin puts this at file scope. */
#define SVC_CONNECTOR_SDK_MARKER \
  __attribute__((visibility("default"))) void svc_connector_sdk_v1_0(void) {}

#define SVC_EXPORT __attribute__((visibility("default")))

enum { SVC_OK = 0, SVC_RETRYABLE = 1, SVC_PERMANENT = 2 };
enum { SVC_POLL_BATCH = 0, SVC_POLL_NO_DATA = 1, SVC_POLL_TOO_SMALL = 2 };
enum { SVC_LOG_ERROR = 0, SVC_LOG_WARN = 1, SVC_LOG_INFO = 2, SVC_LOG_DEBUG = 3 };

/* The only callback: a log line (NUL-terminated UTF-8) of instance `id`. */
typedef void (*svc_log_fn)(uint32_t id, int32_t level, const char *msg);

/* ---- Sink: implement these ------------------------------------------------------------ */
SVC_EXPORT int32_t svc_sink_open(uint32_t id, const uint8_t *config_json, uint32_t config_len, svc_log_fn log);
/* Writes `batch`; fills results[0..count) (one status per record). */
SVC_EXPORT int32_t svc_sink_write(uint32_t id, const uint8_t *batch, uint32_t batch_len, uint8_t *results, uint32_t count);
/* Everything write() reported ok is durable when this returns 0. */
SVC_EXPORT int32_t svc_sink_flush(uint32_t id);
SVC_EXPORT int32_t svc_sink_close(uint32_t id);

/* ---- Source: implement these ---------------------------------------------------------- */
/* `state` is the last saved checkpoint (state_len 0 = none: start from the beginning). */
SVC_EXPORT int32_t svc_source_open(uint32_t id, const uint8_t *config_json, uint32_t config_len, const uint8_t *state, uint32_t state_len, svc_log_fn log);
/* Writes at most `max_records` records as a source batch into out[0..cap); *out_len = bytes
 * written, or the bytes needed when it returns SVC_POLL_TOO_SMALL. */
SVC_EXPORT int32_t svc_source_poll(uint32_t id, uint8_t *out, uint32_t cap, uint32_t *out_len, uint32_t max_records, uint32_t timeout_ms);
/* ack = 1: the last batch is produced and checkpointed; 0: poll it again. */
SVC_EXPORT int32_t svc_source_commit(uint32_t id, int32_t ack);
SVC_EXPORT int32_t svc_source_close(uint32_t id);

/* Why the last call of `id` failed; returns the message length (truncated to cap). */
SVC_EXPORT uint32_t svc_last_error(uint32_t id, char *buf, uint32_t cap);

/* ---- Reading a sink batch ------------------------------------------------------------- */
typedef struct {
  const char *topic; uint16_t topic_len;
  int32_t partition; int64_t offset; int64_t timestamp_ms;
  const uint8_t *key; int32_t key_len; /* key_len -1: no key */
  const uint8_t *value; uint32_t value_len;
  /* Record headers: walk them with svc_header_next (header_count 0: none). */
  const uint8_t *headers; uint16_t header_count;
} svc_sink_record;

typedef struct { const char *name; uint16_t name_len; const uint8_t *value; uint32_t value_len; } svc_header;

/* h: the headers trailer after the last record ("SVCH"), or 0 when the batch has none. */
typedef struct { const uint8_t *p, *end; uint32_t remaining; const uint8_t *h; } svc_batch_reader;

static inline uint32_t svc_rd_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t svc_rd_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Returns 0, or -1 when the batch is shorter than its header says. Finds the optional
 * headers trailer by skipping over the records once (lengths only). */
static inline int svc_batch_begin(svc_batch_reader *r, const uint8_t *batch, uint32_t len) {
  if (len < 4) return -1;
  r->remaining = svc_rd_u32(batch); r->p = batch + 4; r->end = batch + len; r->h = 0;
  const uint8_t *p = r->p;
  for (uint32_t i = 0; i < r->remaining; i++) {
    if (r->end - p < 2) return -1;
    p += 2 + (p[0] | (p[1] << 8));
    if (r->end - p < 24) return -1;
    int32_t kl = (int32_t)svc_rd_u32(p + 20); p += 24;
    if (kl > 0) { if (r->end - p < kl) return -1; p += kl; }
    if (r->end - p < 4) return -1;
    uint32_t vl = svc_rd_u32(p); p += 4;
    if ((uint64_t)(r->end - p) < vl) return -1;
    p += vl;
  }
  if (r->end - p >= 4 && svc_rd_u32(p) == 0x48435653u) r->h = p + 4;
  return 0;
}

/* 1 = a header was read into *h, 0 = no more (call with *p = rec->headers, *left = header_count). */
static inline int svc_header_next(const uint8_t **p, uint16_t *left, svc_header *h) {
  if (*left == 0) return 0;
  const uint8_t *q = *p;
  h->name_len = (uint16_t)(q[0] | (q[1] << 8)); h->name = (const char *)(q + 2); q += 2 + h->name_len;
  h->value_len = svc_rd_u32(q); h->value = q + 4; q += 4 + h->value_len;
  *p = q; (*left)--; return 1;
}

/* 1 = a record was read into *rec, 0 = no more records, -1 = malformed. */
static inline int svc_batch_next(svc_batch_reader *r, svc_sink_record *rec) {
  if (r->remaining == 0) return 0;
  const uint8_t *p = r->p;
  if (r->end - p < 2) return -1;
  rec->topic_len = (uint16_t)(p[0] | (p[1] << 8)); p += 2;
  if (r->end - p < (long)rec->topic_len + 4 + 8 + 8 + 4) return -1;
  rec->topic = (const char *)p; p += rec->topic_len;
  rec->partition = (int32_t)svc_rd_u32(p); p += 4;
  rec->offset = (int64_t)svc_rd_u64(p); p += 8;
  rec->timestamp_ms = (int64_t)svc_rd_u64(p); p += 8;
  rec->key_len = (int32_t)svc_rd_u32(p); p += 4;
  if (rec->key_len > 0) { if (r->end - p < rec->key_len) return -1; rec->key = p; p += rec->key_len; } else rec->key = 0;
  if (r->end - p < 4) return -1;
  rec->value_len = svc_rd_u32(p); p += 4;
  if ((uint64_t)(r->end - p) < rec->value_len) return -1;
  rec->value = p; p += rec->value_len;
  rec->headers = 0; rec->header_count = 0;
  if (r->h) {
    /* Validate this record's headers once, so svc_header_next needs no bounds checks. */
    const uint8_t *h = r->h;
    if (r->end - h < 2) return -1;
    uint16_t n = (uint16_t)(h[0] | (h[1] << 8)); h += 2;
    rec->headers = h; rec->header_count = n;
    for (uint16_t i = 0; i < n; i++) {
      if (r->end - h < 2) return -1;
      uint16_t nl = (uint16_t)(h[0] | (h[1] << 8)); h += 2;
      if (r->end - h < (long)nl + 4) return -1;
      h += nl;
      uint32_t vl = svc_rd_u32(h); h += 4;
      if ((uint64_t)(r->end - h) < vl) return -1;
      h += vl;
    }
    r->h = h;
  }
  r->p = p; r->remaining--; return 1;
}

/* ---- Writing a source batch ----------------------------------------------------------- */
/* Records go forward from the start of `out`; the headers of svc_source_add_h records wait at
 * the end of `out` (one block per record, written downwards) until svc_source_end moves them
 * into the trailer after the last record. `tail`: bytes used at the end; `trailer`: bytes the
 * trailer will take without its per-record counts. */
typedef struct { uint8_t *buf; uint32_t cap, len, count; int overflow; uint32_t tail, trailer, with_headers; } svc_source_writer;

static inline void svc_wr_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void svc_wr_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* Starts a batch whose checkpoint (after it) is `state`. */
static inline void svc_source_begin(svc_source_writer *w, uint8_t *out, uint32_t cap, const uint8_t *state, uint32_t state_len) {
  w->buf = out; w->cap = cap; w->count = 0; w->overflow = 0; w->len = 8 + state_len;
  w->tail = 0; w->trailer = 0; w->with_headers = 0;
  if (w->len > cap) { w->overflow = 1; return; }
  svc_wr_u32(out + 4, state_len); memcpy(out + 8, state, state_len);
}

/* Appends a record (key may be NULL). On overflow keeps counting the bytes needed. */
static inline void svc_source_add(svc_source_writer *w, const uint8_t *key, int32_t key_len, const uint8_t *value, uint32_t value_len) {
  uint32_t need = 4 + (key_len > 0 ? (uint32_t)key_len : 0) + 4 + value_len;
  if (!w->overflow && (uint64_t)w->len + need + w->tail <= w->cap) {
    uint8_t *p = w->buf + w->len;
    svc_wr_u32(p, (uint32_t)(key == 0 ? -1 : key_len)); p += 4;
    if (key != 0 && key_len > 0) { memcpy(p, key, (size_t)key_len); p += key_len; }
    svc_wr_u32(p, value_len); p += 4; memcpy(p, value, value_len);
  } else w->overflow = 1;
  w->len += need; w->count++;
}

/* Appends a record with `header_count` headers (they arrive as Kafka record headers; a value is
 * read as UTF-8, a name repeated keeps its last value). The block at the end of `out` is the
 * headers in trailer form, then u32 record index, u16 header_count, u32 data length. */
static inline void svc_source_add_h(svc_source_writer *w, const uint8_t *key, int32_t key_len, const uint8_t *value, uint32_t value_len, const svc_header *headers, uint16_t header_count) {
  uint32_t index = w->count, data = 0;
  for (uint16_t i = 0; i < header_count; i++) data += 2 + headers[i].name_len + 4 + headers[i].value_len;
  svc_source_add(w, key, key_len, value, value_len);
  if (header_count == 0) return;
  uint32_t block = data + 10;
  if (!w->overflow && (uint64_t)w->len + w->tail + block <= w->cap) {
    uint8_t *p = w->buf + w->cap - w->tail - block;
    for (uint16_t i = 0; i < header_count; i++) {
      svc_wr_u16(p, headers[i].name_len); p += 2; memcpy(p, headers[i].name, headers[i].name_len); p += headers[i].name_len;
      svc_wr_u32(p, headers[i].value_len); p += 4; memcpy(p, headers[i].value, headers[i].value_len); p += headers[i].value_len;
    }
    svc_wr_u32(p, index); svc_wr_u16(p + 4, header_count); svc_wr_u32(p + 6, data);
  } else w->overflow = 1;
  w->tail += block; w->trailer += data; w->with_headers++;
}

/* Finishes the batch: returns SVC_POLL_BATCH, or SVC_POLL_TOO_SMALL with *out_len = bytes needed. */
static inline int32_t svc_source_end(svc_source_writer *w, uint32_t *out_len) {
  uint32_t trailer = w->with_headers == 0 ? 0 : 4 + 2 * w->count + w->trailer;
  if (w->overflow || (uint64_t)w->len + trailer + w->tail > w->cap) {
    *out_len = w->len + trailer + w->tail;
    return SVC_POLL_TOO_SMALL;
  }
  svc_wr_u32(w->buf, w->count);
  *out_len = w->len + trailer;
  if (trailer == 0) return SVC_POLL_BATCH;
  /* The blocks sit at the end, the first record's highest: walk them down, in record order. */
  uint8_t *t = w->buf + w->len, *top = w->buf + w->cap;
  svc_wr_u32(t, 0x48435653u); t += 4;
  uint32_t next_index = UINT32_MAX, n = 0, data = 0;
  const uint8_t *block = 0;
  for (uint32_t i = 0; i < w->count; i++) {
    if (next_index == UINT32_MAX && top > w->buf + w->cap - w->tail) {
      next_index = svc_rd_u32(top - 10); n = (uint16_t)(top[-6] | (top[-5] << 8)); data = svc_rd_u32(top - 4);
      block = top - 10 - data;
    }
    if (i == next_index) {
      svc_wr_u16(t, (uint16_t)n); t += 2; memmove(t, block, data); t += data;
      top = (uint8_t *)block; next_index = UINT32_MAX;
    } else { svc_wr_u16(t, 0); t += 2; }
  }
  return SVC_POLL_BATCH;
}

#endif /* SVC_CONNECTOR_H */
