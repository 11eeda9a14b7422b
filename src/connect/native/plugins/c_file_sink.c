/*
 * libsvc_connector_c_file_sink: the file sink written in C against svc_connector.h, shipped
 * so the native path runs for real. Appends each value and "\n" to plugin_config.path;
 * flush() is fdatasync. plugin_config: {"path": "..."} (the only key it reads).
 * State per instance id, as the ABI requires (one library serves every instance).
 */
#define _GNU_SOURCE
#include "../../sdk/svc_connector.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

SVC_CONNECTOR_SDK_MARKER

#define MAX_INSTANCES 1024
static struct { int fd; char err[256]; } inst[MAX_INSTANCES];

static int32_t fail(uint32_t id, const char *what) {
  snprintf(inst[id % MAX_INSTANCES].err, sizeof inst[0].err, "%s: %s", what, strerror(errno));
  return -1;
}

/* Finds "path":"…" in the config JSON (no escapes in the path). */
static int config_path(const uint8_t *json, uint32_t len, char *out, size_t cap) {
  const char *key = "\"path\"";
  for (uint32_t i = 0; i + 6 < len; i++) {
    if (memcmp(json + i, key, 6) != 0) continue;
    uint32_t j = i + 6;
    while (j < len && (json[j] == ' ' || json[j] == ':')) j++;
    if (j >= len || json[j] != '"') return -1;
    j++;
    size_t n = 0;
    while (j < len && json[j] != '"' && n + 1 < cap) out[n++] = (char)json[j++];
    out[n] = 0;
    return n > 0 ? 0 : -1;
  }
  return -1;
}

int32_t svc_sink_open(uint32_t id, const uint8_t *config, uint32_t config_len, svc_log_fn log) {
  char path[4096];
  if (id >= MAX_INSTANCES) return -1;
  if (config_path(config, config_len, path, sizeof path) != 0) {
    snprintf(inst[id].err, sizeof inst[0].err, "c file sink: plugin_config.path is required");
    return -1;
  }
  inst[id].fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (inst[id].fd < 0) return fail(id, path);
  if (log) log(id, SVC_LOG_INFO, "c file sink opened");
  return 0;
}

/* Writes the whole batch with writev (value, "\n" pairs, IOV_MAX at a time). A failed or
 * short write leaves the batch's tail undefined, so every record of it is then retryable. */
int32_t svc_sink_write(uint32_t id, const uint8_t *batch, uint32_t batch_len, uint8_t *results, uint32_t count) {
  enum { IOVS = 1024 };
  static const char nl = '\n';
  struct iovec iov[IOVS];
  svc_batch_reader r;
  svc_sink_record rec;
  int ok = 1;
  if (svc_batch_begin(&r, batch, batch_len) != 0) return -1;
  for (uint32_t i = 0; i < count && ok;) {
    int n = 0;
    for (; i < count && n + 2 <= IOVS; i++) {
      if (svc_batch_next(&r, &rec) != 1) { snprintf(inst[id].err, sizeof inst[0].err, "malformed batch"); return -1; }
      iov[n].iov_base = (void *)rec.value; iov[n++].iov_len = rec.value_len;
      iov[n].iov_base = (void *)&nl; iov[n++].iov_len = 1;
    }
    int at = 0;
    while (at < n) {
      ssize_t w = writev(inst[id].fd, iov + at, n - at);
      if (w < 0) { if (errno == EINTR) continue; ok = 0; break; }
      while (at < n && (size_t)w >= iov[at].iov_len) { w -= (ssize_t)iov[at].iov_len; at++; }
      if (at < n) { iov[at].iov_base = (char *)iov[at].iov_base + w; iov[at].iov_len -= (size_t)w; }
    }
  }
  memset(results, ok ? SVC_OK : SVC_RETRYABLE, count);
  return 0;
}

int32_t svc_sink_flush(uint32_t id) { return fdatasync(inst[id].fd) == 0 ? 0 : fail(id, "fdatasync"); }

int32_t svc_sink_close(uint32_t id) {
  if (inst[id].fd > 0) close(inst[id].fd);
  inst[id].fd = -1;
  return 0;
}

uint32_t svc_last_error(uint32_t id, char *buf, uint32_t cap) {
  size_t n = strlen(inst[id % MAX_INSTANCES].err);
  if (n > cap) n = cap;
  memcpy(buf, inst[id % MAX_INSTANCES].err, n);
  return (uint32_t)n;
}
