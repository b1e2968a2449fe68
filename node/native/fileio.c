/*
 * Whole-file steps of a local drive, each one job on a libuv pool thread,
 * so a small object's metadata costs one thread-pool crossing per drive per
 * step instead of one per system call (fs/promises' readFile is open, fstat,
 * read and close; a durable write is about ten):
 *
 *   fileRead(path, callback(err, buffer))
 *       the whole regular file at `path`
 *   fileReadBatch(paths, callback(err, results))
 *       each whole file of `paths` (1 to 64), one after the other in the one
 *       job; results[i] is its Buffer or its Error (shaped as below); `err`
 *       only when the job itself failed
 *   fileWriteDurable(tmp, dst, data, parentSyncs, floor, callback(err))
 *       writes `data` to the new file `tmp`, fsyncs and closes it, renames it
 *       to `dst` (creating missing directories of `dst` below the directory
 *       `floor` when the rename finds none: `floor` itself, e.g. a bucket's
 *       volume, is never created, so a deleted one stays deleted) and fsyncs
 *       `parentSyncs` (1 or 2) directories upwards from dst's own, so the
 *       rename (and a directory just created) survives power loss; on any
 *       failure before the rename `tmp` is removed. A missing temp directory
 *       is created again (one level).
 *   fileWriteDurable(tmp, dst, data, parentSyncs, floor, leaveTop, callback(err, top))
 *       the same, except that when `leaveTop` is true and two or more
 *       directories need their fsync, the topmost of them (the parent of the
 *       highest directory that holds a new entry, e.g. a bucket's prefix
 *       directory when the object's own directory was just made) is not
 *       fsync'd here: its path comes back as `top`, and the write is durable
 *       only once the caller has had that directory fsync'd by a sync that
 *       started after this job called back (`fileSyncDir`). `top` is null
 *       when every directory was fsync'd here. This lets concurrent commits
 *       into one directory share that fsync (local-fs.ts, DirSyncGroups).
 *   fileSyncDir(dir, callback(err))
 *       opens the directory `dir`, fsyncs and closes it.
 *   fileReadCached(path) -> Buffer | null
 *       not a job: the whole file at `path` read on the calling thread, but
 *       only if that can be done without waiting for the device: the path is
 *       resolved from the kernel's lookup cache alone (openat2 with
 *       RESOLVE_CACHED), the data read from the page cache alone (preadv2
 *       with RWF_NOWAIT), the file opened with O_NOATIME (so the read dirties
 *       no inode) and at most CACHED_READ_MAX bytes long. Anything else (a
 *       name not in the cache, a page not in memory, a kernel without these
 *       calls, a file we may not open O_NOATIME, a larger file) answers null:
 *       read it with a job. A definite answer the cache gives (ENOENT,
 *       ENOTDIR, EISDIR) throws the Error the job would have called back with.
 *   fileWriteDurableBatch(items, callback(err, results))
 *       several publishes of one drive in one job: each item is
 *       [tmp, dst, data, parentSyncs, floor, noReplace?] (noReplace: the
 *       rename refuses to replace an existing dst, EEXIST, and nothing
 *       changes but the temp file's removal) and goes through the steps of
 *       fileWriteDurable with leaveTop, one after the other; then every
 *       directory left (each distinct one once) is fsync'd in the same job,
 *       after the last item's rename, so that one fsync started after every
 *       entry it must carry existed. results[i] is null (item i is durable)
 *       or its Error; a failed directory fsync fails every item that needed
 *       it (named by the item's dst). `err` only when the job itself failed.
 *
 * A failed step calls back with an Error shaped like node:fs's: `code`
 * (`ENOENT`, `ENOSPC`, ...), `errno` (negative), `syscall` and `path`, so
 * callers map errors the same way on both paths. `data` is referenced until
 * the callback and must not be changed meanwhile.
 */
#define _GNU_SOURCE /* O_NOATIME, preadv2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uv.h>

#include "fileio.h"
#include "napi_check.h"

enum { JOB_READ, JOB_WRITE, JOB_READ_BATCH, JOB_SYNC_DIR, JOB_WRITE_BATCH };

/* Most files one fileReadBatch job reads. */
#define READ_BATCH_MAX 64
/* Most publishes one fileWriteDurableBatch job makes. */
#define WRITE_BATCH_MAX 64

typedef struct io_job {
  int kind;
  napi_async_work work;
  napi_ref callback;
  napi_ref data_ref;
  char *path; /* read: the file; write: tmp */
  char *dst;
  char *floor;
  const uint8_t *in;
  size_t in_len;
  int parent_syncs;
  int leave_top; /* write: leave the topmost directory sync to the caller */
  int no_replace; /* write: the rename fails with EEXIST when dst exists (renameat2 RENAME_NOREPLACE) */
  char *top;     /* write: that directory, when left */
  int top_synced; /* batch item: its left directory was fsync'd (or failed to be) */
  uint8_t *out;
  size_t out_len;
  int err; /* errno of the failed step, 0 on success */
  const char *syscall;
  const char *err_path; /* which of path/dst the failure names */
  struct io_job *items; /* batches: one JOB_READ or JOB_WRITE per file */
  size_t count;
} io_job;

/* What a job or a batch item holds (not the struct itself). */
static void job_release(napi_env env, io_job *j) {
  if (j->callback) napi_delete_reference(env, j->callback);
  if (j->data_ref) napi_delete_reference(env, j->data_ref);
  free(j->path);
  free(j->dst);
  free(j->floor);
  free(j->top);
  free(j->out);
  for (size_t i = 0; i < j->count; i++) job_release(env, &j->items[i]);
  free(j->items);
}

static void job_free(napi_env env, io_job *j) {
  job_release(env, j);
  free(j);
}

static void fail(io_job *j, const char *syscall, const char *path) {
  j->err = errno;
  j->syscall = syscall;
  j->err_path = path;
}

static void do_read(io_job *j) {
  int fd;
  do fd = open(j->path, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fail(j, "open", j->path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    fail(j, "fstat", j->path);
    close(fd);
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    fail(j, "read", j->path);
    close(fd);
    return;
  }
  if (st.st_size > INT32_MAX) {
    /* As node:fs's readFile: whole-file reads are for metadata-sized files. */
    errno = EFBIG;
    fail(j, "read", j->path);
    close(fd);
    return;
  }
  size_t cap = st.st_size > 0 ? (size_t)st.st_size : 0;
  j->out = malloc(cap > 0 ? cap : 1);
  if (!j->out) {
    errno = ENOMEM;
    fail(j, "read", j->path);
    close(fd);
    return;
  }
  size_t got = 0;
  while (got < cap) {
    ssize_t n = pread(fd, j->out + got, cap - got, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fail(j, "read", j->path);
      close(fd);
      return;
    }
    if (n == 0) break; /* shrank since fstat: what is there */
    got += (size_t)n;
  }
  j->out_len = got;
  close(fd);
}

/*
 * Creates the missing directories of `file`'s directory, deepest existing
 * first found by walking up (so an existing tree costs one mkdir per missing
 * level, not one per component), never creating `floor` or anything above
 * it: a path at or above `floor` that is missing fails with ENOENT. Returns
 * how many levels it created (their parents need an fsync), -1 on failure.
 */
static int mkdirs_below(const char *file, const char *floor) {
  char buf[PATH_MAX];
  size_t len = strlen(file), flen = strlen(floor);
  if (len >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (strncmp(file, floor, flen) != 0 || file[flen] != '/') {
    errno = EINVAL;
    return -1;
  }
  memcpy(buf, file, len + 1);
  /* One entry per path component at most: a component is at least one byte plus its slash. */
  char *cut[PATH_MAX / 2 + 1];
  int depth = 0;
  int created = 0;
  /* Walk up from file's directory until a mkdir succeeds or finds it existing. */
  for (;;) {
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf || (size_t)(slash - buf) <= flen) {
      errno = ENOENT;
      return -1;
    }
    *slash = '\0';
    cut[depth++] = slash;
    if (mkdir(buf, 0755) == 0) {
      created++;
      break;
    }
    if (errno == EEXIST) break;
    if (errno != ENOENT || depth >= (int)(sizeof cut / sizeof cut[0])) return -1;
  }
  /* Then back down: every level below the one just made or found. */
  for (int i = depth - 1; i > 0; i--) {
    *cut[i] = '/';
    if (mkdir(buf, 0755) == 0) created++;
    else if (errno != EEXIST) return -1;
  }
  return created;
}

/* open, fsync, close of the directory `dir`; 0 or -1 with errno set. */
static int sync_dir(const char *dir) {
  int fd;
  do fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  int r = fsync(fd);
  int e = errno;
  close(fd);
  if (r != 0) {
    errno = e;
    return -1;
  }
  return 0;
}

/* `path` into buf (with its terminator); -1 with ENAMETOOLONG when it does not fit. */
static int copy_path(const char *path, char *buf, size_t bufsize) {
  size_t len = strlen(path);
  if (len >= bufsize) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, len + 1);
  return 0;
}

/* The directory `levels` steps up from `file` (1: file's own) into buf; -1 when it has no such ancestor. */
static int ancestor(const char *file, int levels, char *buf, size_t bufsize) {
  if (copy_path(file, buf, bufsize) != 0) return -1;
  for (int i = 0; i < levels; i++) {
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf) {
      errno = EINVAL;
      return -1;
    }
    *slash = '\0';
  }
  return 0;
}

/* fsync of the directory holding `file`, then of `levels - 1` more upwards. */
static int sync_parents(const char *file, int levels, char *buf, size_t bufsize) {
  if (copy_path(file, buf, bufsize) != 0) return -1;
  for (int i = 0; i < levels; i++) {
    char *slash = strrchr(buf, '/');
    if (!slash) return 0;
    if (slash == buf) slash[1] = '\0';
    else *slash = '\0';
    if (sync_dir(buf) != 0) return -1;
    if (slash == buf) return 0;
  }
  return 0;
}

/* The steps of a publish, each 0 or -1 (the failure recorded in `j`, the temp file removed). */

/* `data` into the new temp file; its descriptor in *fdp. */
static int write_temp(io_job *j, int *fdp) {
  int fd;
  do fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno == ENOENT) {
    /* The temp directory itself went away: recreate it (one level). */
    char dir[PATH_MAX];
    size_t len = strlen(j->path);
    char *slash;
    if (len >= sizeof dir) {
      errno = ENAMETOOLONG;
      fail(j, "mkdir", j->path);
      return -1;
    }
    memcpy(dir, j->path, len + 1);
    if ((slash = strrchr(dir, '/')) != NULL && slash != dir) *slash = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      fail(j, "mkdir", j->path);
      return -1;
    }
    do fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
  }
  if (fd < 0) {
    fail(j, "open", j->path);
    return -1;
  }
  size_t done = 0;
  while (done < j->in_len) {
    ssize_t n = write(fd, j->in + done, j->in_len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fail(j, "write", j->path);
      close(fd);
      unlink(j->path);
      return -1;
    }
    done += (size_t)n;
  }
  *fdp = fd;
  return 0;
}

/* The temp file's data and inode on stable storage, then closed. */
static int sync_temp(io_job *j, int fd) {
  if (fsync(fd) != 0) {
    fail(j, "fsync", j->path);
    close(fd);
    unlink(j->path);
    return -1;
  }
  if (close(fd) != 0 && errno != EINTR) {
    fail(j, "close", j->path);
    unlink(j->path);
    return -1;
  }
  return 0;
}

/* The rename into place (missing directories made); *levels: how many directories upwards need an fsync. */
static int rename_into_place(io_job *j, int *levels) {
  *levels = j->parent_syncs;
  /* A directory made here can be removed again by a neighbour's cleanup (an
     empty-directory prune) before the rename: make it again, a few times. */
  for (int attempt = 0; (j->no_replace ? renameat2(AT_FDCWD, j->path, AT_FDCWD, j->dst, RENAME_NOREPLACE) : rename(j->path, j->dst)) != 0; attempt++) {
    int made = errno == ENOENT && attempt < 3 ? mkdirs_below(j->dst, j->floor) : -1;
    if (made < 0) {
      fail(j, "rename", j->dst);
      unlink(j->path);
      return -1;
    }
    /* Each directory made here is an entry in its parent: sync up to the parent of the highest. */
    if (made + 1 > *levels) *levels = made + 1;
  }
  return 0;
}

/* The directory fsyncs after the rename, the topmost left to the caller with leave_top (see fileWriteDurable). */
static void sync_after_rename(io_job *j, int levels) {
  char buf[PATH_MAX];
  if (j->leave_top && levels >= 2) {
    if (ancestor(j->dst, levels, buf, sizeof buf) != 0) return fail(j, "fsync", j->dst);
    if (!(j->top = strdup(buf))) {
      errno = ENOMEM;
      return fail(j, "fsync", j->dst);
    }
    levels--;
  }
  /* The file is in place; a failing directory sync is still the write's failure (named by the file). */
  if (sync_parents(j->dst, levels, buf, sizeof buf) != 0) fail(j, "fsync", j->dst);
}

static void do_write(io_job *j) {
  int fd, levels;
  if (write_temp(j, &fd) != 0 || sync_temp(j, fd) != 0 || rename_into_place(j, &levels) != 0) return;
  sync_after_rename(j, levels);
}

static void do_sync_dir(io_job *j) {
  if (sync_dir(j->path) != 0) fail(j, "fsync", j->path);
}

/*
 * The items' publishes step by step across the batch: every temp file
 * written, then each fsync'd, then each renamed into place, then each
 * one's directories fsync'd (its topmost left), then each distinct directory
 * left fsync'd once, after the batch's last rename: an fsync of a directory
 * carries every entry it holds when it starts, so it stands for every item
 * that left it, and a failed one fails those items. Each item keeps the
 * order of a single publish (its data and inode durable before its rename,
 * its directories synced after it); going step by step lets one fsync write
 * out metadata blocks the items share (the temp directory's block, inode
 * table blocks) and the next ones find them already clean.
 */
static void do_write_batch(io_job *j) {
  size_t n = j->count;
  int fds[WRITE_BATCH_MAX], levels[WRITE_BATCH_MAX];
  /* An item whose step failed (err set, temp file removed) takes no further step. */
  for (size_t i = 0; i < n; i++) {
    j->items[i].leave_top = 1;
    (void)write_temp(&j->items[i], &fds[i]);
  }
  for (size_t i = 0; i < n; i++)
    if (j->items[i].err == 0) (void)sync_temp(&j->items[i], fds[i]);
  for (size_t i = 0; i < n; i++)
    if (j->items[i].err == 0) (void)rename_into_place(&j->items[i], &levels[i]);
  for (size_t i = 0; i < n; i++)
    if (j->items[i].err == 0) sync_after_rename(&j->items[i], levels[i]);
  for (size_t i = 0; i < n; i++) {
    io_job *it = &j->items[i];
    if (it->err != 0 || !it->top || it->top_synced) continue;
    int r = sync_dir(it->top);
    int e = errno;
    for (size_t k = i; k < n; k++) {
      io_job *o = &j->items[k];
      if (o->err != 0 || !o->top || o->top_synced || strcmp(o->top, it->top) != 0) continue;
      o->top_synced = 1;
      if (r != 0) {
        o->err = e;
        o->syscall = "fsync";
        o->err_path = o->dst;
      }
    }
  }
}

static void execute(napi_env env, void *data) {
  (void)env;
  io_job *j = data;
  if (j->kind == JOB_READ) do_read(j);
  else if (j->kind == JOB_READ_BATCH)
    for (size_t i = 0; i < j->count; i++) do_read(&j->items[i]);
  else if (j->kind == JOB_WRITE) do_write(j);
  else if (j->kind == JOB_WRITE_BATCH) do_write_batch(j);
  else do_sync_dir(j);
}

/* An Error shaped like node:fs's for errno `e` of `syscall` on `path`. */
static napi_value fs_error(napi_env env, int e, const char *syscall, const char *path) {
  const char *name = uv_err_name(-e);
  char msg[PATH_MAX + 128];
  snprintf(msg, sizeof msg, "%s: %s, %s '%s'", name, uv_strerror(-e), syscall, path);
  napi_value err, code, m, no, sc, p;
  if (napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code) != napi_ok ||
      napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m) != napi_ok || napi_create_error(env, code, m, &err) != napi_ok ||
      napi_create_int32(env, -e, &no) != napi_ok || napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &sc) != napi_ok ||
      napi_create_string_utf8(env, path, NAPI_AUTO_LENGTH, &p) != napi_ok || napi_set_named_property(env, err, "errno", no) != napi_ok ||
      napi_set_named_property(env, err, "syscall", sc) != napi_ok || napi_set_named_property(env, err, "path", p) != napi_ok)
    return NULL;
  return err;
}

/* A plain Error for a job that could not report its own result (so the caller's promise still settles). */
static napi_value plain_error(napi_env env, const char *text) {
  napi_value m, err = NULL;
  if (napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &m) != napi_ok || napi_create_error(env, NULL, m, &err) != napi_ok) return NULL;
  return err;
}

static void complete(napi_env env, napi_status status, void *data) {
  io_job *j = data;
  napi_value cb, global, args[2];
  int argc = 1;
  if (napi_get_reference_value(env, j->callback, &cb) != napi_ok || napi_get_global(env, &global) != napi_ok) goto done;
  args[0] = NULL;
  if (status != napi_ok) {
    args[0] = plain_error(env, "file job canceled");
  } else if (j->err != 0) {
    args[0] = fs_error(env, j->err, j->syscall, j->err_path);
    if (!args[0]) args[0] = plain_error(env, "file job failed, and its error could not be built");
  } else if (napi_get_null(env, &args[0]) != napi_ok) {
    args[0] = plain_error(env, "file job: could not report success");
  } else if (j->kind == JOB_READ_BATCH || j->kind == JOB_WRITE_BATCH) {
    /* (null, results): each item's Buffer (read) or null (write: durable), or its Error (a failed item fails only its own slot). */
    napi_value list;
    if (napi_create_array_with_length(env, j->count, &list) != napi_ok) {
      args[0] = plain_error(env, "file batch: could not allocate the results");
    } else {
      args[1] = list;
      argc = 2;
      for (size_t i = 0; i < j->count && argc == 2; i++) {
        io_job *it = &j->items[i];
        napi_value v = NULL;
        void *copy;
        if (it->err != 0) v = fs_error(env, it->err, it->syscall, it->err_path);
        else if (j->kind == JOB_WRITE_BATCH) {
          if (napi_get_null(env, &v) != napi_ok) v = NULL;
        } else if (napi_create_buffer_copy(env, it->out_len, it->out ? it->out : (uint8_t *)"", &copy, &v) != napi_ok) v = NULL;
        if (!v || napi_set_element(env, list, (uint32_t)i, v) != napi_ok) {
          args[0] = plain_error(env, "file batch: could not report a result");
          argc = 1;
        }
      }
    }
  } else if (j->kind == JOB_READ) {
    void *copy;
    if (napi_create_buffer_copy(env, j->out_len, j->out ? j->out : (uint8_t *)"", &copy, &args[1]) == napi_ok) argc = 2;
    else args[0] = plain_error(env, "file read: could not allocate the result");
  } else if (j->kind == JOB_WRITE && j->leave_top) {
    napi_status st = j->top ? napi_create_string_utf8(env, j->top, NAPI_AUTO_LENGTH, &args[1]) : napi_get_null(env, &args[1]);
    if (st == napi_ok) argc = 2;
    else args[0] = plain_error(env, "file write: could not report the directory left to sync");
  }
  if (args[0]) napi_call_function(env, global, cb, (size_t)argc, args, NULL);
done:
  napi_delete_async_work(env, j->work);
  job_free(env, j);
}

static char *string_arg(napi_env env, napi_value v) {
  size_t len;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok || len == 0 || len >= PATH_MAX) return NULL;
  char *s = malloc(len + 1);
  if (!s) return NULL;
  if (napi_get_value_string_utf8(env, v, s, len + 1, &len) != napi_ok || strlen(s) != len) {
    free(s);
    return NULL;
  }
  return s;
}

static int is_function(napi_env env, napi_value v) {
  napi_valuetype t;
  return napi_typeof(env, v, &t) == napi_ok && t == napi_function;
}

static napi_value queue(napi_env env, io_job *j, napi_value callback, const char *what) {
  napi_value name;
  if (napi_create_reference(env, callback, 1, &j->callback) != napi_ok ||
      napi_create_string_utf8(env, "svc.fileio", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, j, &j->work) != napi_ok) {
    job_free(env, j);
    napi_throw_error(env, "ERR_SVC_NATIVE", what);
    return NULL;
  }
  if (napi_queue_async_work(env, j->work) != napi_ok) {
    napi_delete_async_work(env, j->work);
    job_free(env, j);
    napi_throw_error(env, "ERR_SVC_NATIVE", what);
  }
  return NULL;
}

/* A zeroed job of `kind`; throws and returns NULL when out of memory. */
static io_job *new_job(napi_env env, int kind) {
  io_job *j = calloc(1, sizeof *j);
  if (!j) napi_throw_error(env, "ERR_SVC_NATIVE", "file job: out of memory");
  else j->kind = kind;
  return j;
}

/* A job of `kind` on one path: (path: string, callback); `usage` is the TypeError's text. */
static napi_value path_job(napi_env env, napi_callback_info info, int kind, const char *usage, const char *queue_failed) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  io_job *j = new_job(env, kind);
  if (!j) return NULL;
  if (argc < 2 || !is_function(env, argv[1]) || !(j->path = string_arg(env, argv[0]))) {
    job_free(env, j);
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  return queue(env, j, argv[1], queue_failed);
}

static napi_value file_read(napi_env env, napi_callback_info info) {
  return path_job(env, info, JOB_READ, "fileRead(path: string, callback)", "fileRead: could not queue the job");
}

/*
 * A batch job of `kind` from (items: array of 1 to `max`, callback): *argv
 * gets both arguments and the job has `count` zeroed items of `item_kind`.
 * Throws (with `usage`) and returns NULL on bad arguments or no memory.
 */
static io_job *batch_job(napi_env env, napi_callback_info info, napi_value *argv, int kind, int item_kind, uint32_t max, const char *usage) {
  size_t argc = 2;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_array = false;
  uint32_t n = 0;
  if (argc < 2 || !is_function(env, argv[1]) || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, argv[0], &n) != napi_ok || n < 1 || n > max) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  io_job *j = new_job(env, kind);
  if (!j) return NULL;
  if (!(j->items = calloc(n, sizeof *j->items))) {
    job_free(env, j);
    napi_throw_error(env, "ERR_SVC_NATIVE", "file batch: out of memory");
    return NULL;
  }
  j->count = n;
  for (uint32_t i = 0; i < n; i++) j->items[i].kind = item_kind;
  return j;
}

static napi_value file_read_batch(napi_env env, napi_callback_info info) {
  static const char usage[] = "fileReadBatch(paths: string[] (1 to 64), callback)";
  napi_value argv[2];
  io_job *j = batch_job(env, info, argv, JOB_READ_BATCH, JOB_READ, READ_BATCH_MAX, usage);
  if (!j) return NULL;
  for (uint32_t i = 0; i < j->count; i++) {
    napi_value p;
    if (napi_get_element(env, argv[0], i, &p) != napi_ok || !(j->items[i].path = string_arg(env, p))) {
      job_free(env, j);
      napi_throw_type_error(env, NULL, usage);
      return NULL;
    }
  }
  return queue(env, j, argv[1], "fileReadBatch: could not queue the job");
}

/* tmp, dst, data, parentSyncs, floor of one publish into `j` (data held by a reference); 0 on success. */
static int write_args(napi_env env, const napi_value *a, io_job *j) {
  bool is_ta = false;
  napi_typedarray_type type;
  napi_value ab;
  size_t offset;
  void *data = NULL;
  int32_t syncs = 0;
  if (!(j->path = string_arg(env, a[0])) || !(j->dst = string_arg(env, a[1])) || !(j->floor = string_arg(env, a[4])) ||
      napi_is_typedarray(env, a[2], &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, a[2], &type, &j->in_len, &data, &ab, &offset) != napi_ok || type != napi_uint8_array ||
      napi_get_value_int32(env, a[3], &syncs) != napi_ok || syncs < 1 || syncs > 2)
    return -1;
  j->in = data;
  j->parent_syncs = syncs;
  return napi_create_reference(env, a[2], 1, &j->data_ref) == napi_ok ? 0 : -1;
}

static napi_value file_write_durable_batch(napi_env env, napi_callback_info info) {
  static const char usage[] = "fileWriteDurableBatch(items: [tmp, dst, data, parentSyncs, floor, noReplace?][] (1 to 64), callback)";
  napi_value argv[2];
  io_job *j = batch_job(env, info, argv, JOB_WRITE_BATCH, JOB_WRITE, WRITE_BATCH_MAX, usage);
  if (!j) return NULL;
  for (uint32_t i = 0; i < j->count; i++) {
    napi_value item, a[6];
    bool is_array = false;
    uint32_t len = 0;
    bool ok = napi_get_element(env, argv[0], i, &item) == napi_ok && napi_is_array(env, item, &is_array) == napi_ok && is_array &&
              napi_get_array_length(env, item, &len) == napi_ok && (len == 5 || len == 6);
    for (uint32_t k = 0; ok && k < len; k++) ok = napi_get_element(env, item, k, &a[k]) == napi_ok;
    bool no_replace = false;
    if (ok && len == 6) ok = napi_get_value_bool(env, a[5], &no_replace) == napi_ok;
    j->items[i].no_replace = no_replace;
    if (!ok || write_args(env, a, &j->items[i]) != 0) {
      job_free(env, j);
      napi_throw_type_error(env, NULL, usage);
      return NULL;
    }
  }
  return queue(env, j, argv[1], "fileWriteDurableBatch: could not queue the job");
}

static napi_value file_write_durable(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  io_job *j = new_job(env, JOB_WRITE);
  if (!j) return NULL;
  bool leave_top = false;
  /* (…, floor, callback) or (…, floor, leaveTop, callback) */
  size_t cb = argc >= 7 && !is_function(env, argv[5]) ? 6 : 5;
  if (cb == 6 && napi_get_value_bool(env, argv[5], &leave_top) != napi_ok) argc = 0;
  if (argc < cb + 1 || !is_function(env, argv[cb]) || write_args(env, argv, j) != 0) {
    job_free(env, j);
    napi_throw_type_error(env, NULL, "fileWriteDurable(tmp: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2, floor: string, [leaveTop: boolean,] callback)");
    return NULL;
  }
  j->leave_top = leave_top;
  return queue(env, j, argv[cb], "fileWriteDurable: could not queue the job");
}

/* The longest file fileReadCached reads on the calling thread (an event loop's turn stays short). */
#define CACHED_READ_MAX (256 * 1024)

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

/* As <linux/openat2.h>'s struct open_how (not in every libc's headers). */
struct cached_open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};

/* Set once the kernel turned down openat2 or RESOLVE_CACHED as unknown (before Linux 5.12): every later call answers null at once. */
static int cached_reads_unsupported = 0;

/* The outcome of a cached read: done (the buffer made), not possible without waiting (null), or a definite error. */
enum { CACHED_DONE, CACHED_MISS, CACHED_ERROR };

static int read_cached(napi_env env, const char *path, napi_value *out, int *err, const char **syscall_name) {
#ifdef SYS_openat2
  struct cached_open_how how = {(uint64_t)(O_RDONLY | O_CLOEXEC | O_NOATIME), 0, RESOLVE_CACHED};
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      *err = e;
      *syscall_name = "open";
      return CACHED_ERROR;
    }
    if (e == ENOSYS || e == EINVAL || e == E2BIG) cached_reads_unsupported = 1;
    /* EAGAIN (not all in the lookup cache), EPERM (O_NOATIME on a file of another owner), anything else: the job decides. */
    return CACHED_MISS;
  }
  struct stat st;
  int outcome = CACHED_MISS;
  if (fstat(fd, &st) != 0) goto out;
  if (S_ISDIR(st.st_mode)) {
    *err = EISDIR;
    *syscall_name = "read";
    outcome = CACHED_ERROR;
    goto out;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > CACHED_READ_MAX) goto out;
  size_t size = (size_t)st.st_size;
  void *data;
  napi_value buf;
  if (napi_create_buffer(env, size, &data, &buf) != napi_ok) goto out;
  if (size > 0) {
    struct iovec iov = {data, size};
    ssize_t n;
    do n = preadv2(fd, &iov, 1, 0, RWF_NOWAIT);
    while (n < 0 && errno == EINTR);
    /* Not (all) in the page cache, a file system without RWF_NOWAIT, or the file changed under us: the job reads it. */
    if (n != (ssize_t)size) goto out;
  }
  *out = buf;
  outcome = CACHED_DONE;
out:
  close(fd);
  return outcome;
#else
  (void)env, (void)path, (void)out, (void)err, (void)syscall_name;
  cached_reads_unsupported = 1;
  return CACHED_MISS;
#endif
}

static napi_value file_read_cached(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result = NULL;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char *path = argc >= 1 ? string_arg(env, argv[0]) : NULL;
  if (!path) {
    napi_throw_type_error(env, NULL, "fileReadCached(path: string)");
    return NULL;
  }
  int err = 0;
  const char *syscall_name = NULL;
  int outcome = cached_reads_unsupported ? CACHED_MISS : read_cached(env, path, &result, &err, &syscall_name);
  if (outcome == CACHED_ERROR) {
    napi_value e = fs_error(env, err, syscall_name, path);
    free(path);
    if (e) napi_throw(env, e);
    else napi_throw_error(env, NULL, "fileReadCached: its error could not be built");
    return NULL;
  }
  free(path);
  if (outcome == CACHED_MISS && napi_get_null(env, &result) != napi_ok) return NULL;
  return result;
}

static napi_value file_sync_dir(napi_env env, napi_callback_info info) {
  return path_job(env, info, JOB_SYNC_DIR, "fileSyncDir(dir: string, callback)", "fileSyncDir: could not queue the job");
}

napi_status svc_fileio_register(napi_env env, napi_value exports) {
  napi_value yes;
  napi_status st = napi_get_boolean(env, true, &yes);
  if (st != napi_ok) return st;
  napi_property_descriptor props[] = {
      /* fileWriteDurableBatch takes an item's sixth element, noReplace (addons built before it refuse such items). */
      {"fileWriteNoReplace", NULL, NULL, NULL, NULL, yes, napi_enumerable, NULL},
      {"fileRead", NULL, file_read, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fileReadBatch", NULL, file_read_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fileWriteDurable", NULL, file_write_durable, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fileSyncDir", NULL, file_sync_dir, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fileWriteDurableBatch", NULL, file_write_durable_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fileReadCached", NULL, file_read_cached, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
