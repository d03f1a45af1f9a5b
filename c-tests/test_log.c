/* cuzk_set_log_callback: a real warning (a PCE that cannot be saved) and the
 * extraction's progress lines reach the callback with their level and target;
 * bad levels and a swap from inside the callback are refused; and, while
 * threads log, the callback is swapped and removed from another thread: once
 * a swap returns the old callback is never called again (its user data is
 * freed at once, so ASan sees any late call). */
#include "common.h"

#include <pthread.h>
#include <time.h>

#define CIRCUIT "mimc-chain"
#define LOGGERS 3
#define SWAPS 200

/* What one callback installation received. */
struct sink {
  pthread_mutex_t mu;
  int retired; /* set once its callback was replaced: any call after is a bug */
  int late_calls;
  int records;
  int warnings; /* warnings from cuzk::pce::registry naming `needle` */
  int progress; /* info lines from cuzk::progress about the extraction */
  int bad_strings;
  cuzk_status swap_from_inside;
  const char *needle;
};

static void sink_init(struct sink *s, const char *needle) {
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  s->needle = needle;
  s->swap_from_inside = CUZK_OK;
}

static void on_record(void *user, uint32_t level, const char *target, const char *message) {
  struct sink *s = user;
  pthread_mutex_lock(&s->mu);
  s->records++;
  if (s->retired) s->late_calls++;
  if (!target || !message || strlen(target) == 0) s->bad_strings++;
  else if (s->needle && strstr(message, s->needle)) {
    if (level == CUZK_LOG_WARN && strcmp(target, "cuzk::pce::registry") == 0 &&
        strstr(message, "could not save the PCE")) s->warnings++;
    else s->bad_strings++;
  } else if (level == CUZK_LOG_INFO && strcmp(target, "cuzk::progress") == 0 &&
             strstr(message, "extracting the PCE of " CIRCUIT)) s->progress++;
  pthread_mutex_unlock(&s->mu);
}

/* Tries to swap the callback from inside it (refused: it would wait for itself). */
static void swaps_from_inside(void *user, uint32_t level, const char *target, const char *message) {
  struct sink *s = user;
  on_record(user, level, target, message);
  cuzk_status got = cuzk_set_log_callback(CUZK_LOG_INFO, NULL, NULL, NULL);
  pthread_mutex_lock(&s->mu);
  if (got != CUZK_INVALID_ARGUMENT) s->swap_from_inside = got;
  pthread_mutex_unlock(&s->mu);
}

/* Loads the PCE of `size` into a folder that does not exist, then unloads it:
 * an extraction (progress lines) and a warning each time. */
static int unsaved_pce(const char *path, uint64_t size) {
  struct cuzk_error err;
  struct cuzk_circuit c = synthetic(CIRCUIT, size);
  struct cuzk_pce *pce = NULL;
  if (cuzk_pce_load(&c, path, 0, &pce, &err) != CUZK_OK) {
    fprintf(stderr, "load %s: %s\n", path, err.message);
    return 1;
  }
  int bad = cuzk_pce_unload(pce, &err) != CUZK_OK;
  cuzk_pce_free(pce);
  return bad;
}

static char missing_path[LOGGERS + 1][600];
static volatile int stop_logging = 0;

static void *logger(void *arg) {
  int i = (int)(size_t)arg;
  int bad = 0;
  while (!stop_logging) bad += unsaved_pce(missing_path[i], 200 + 40 * (uint64_t)i);
  return (void *)(size_t)bad;
}

int main(void) {
  struct cuzk_error err;
  make_test_dir("log");
  for (int i = 0; i <= LOGGERS; i++) {
    char name[64];
    snprintf(name, sizeof name, "missing/c%d.pce", i);
    test_path(missing_path[i], sizeof missing_path[i], name);
  }

  /* Levels outside the enum are refused. */
  static struct sink unused;
  sink_init(&unused, NULL);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_set_log_callback(0, on_record, &unused, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_set_log_callback(35, on_record, &unused, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_set_log_callback(CUZK_LOG_ERROR + 10, on_record, &unused, &err), &err);
  EXPECT(unused.records == 0);

  /* A real warning and the extraction's progress, with level and target. */
  struct sink first;
  sink_init(&first, missing_path[LOGGERS]);
  EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(CUZK_LOG_INFO, on_record, &first, &err), &err);
  EXPECT(unsaved_pce(missing_path[LOGGERS], 500) == 0);
  EXPECT(first.warnings == 1);
  EXPECT(first.progress >= 2); /* started, done */
  EXPECT(first.bad_strings == 0);

  /* At warn, the progress lines are not even formatted. */
  EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(CUZK_LOG_WARN, on_record, &first, &err), &err);
  int progress_before = first.progress;
  EXPECT(unsaved_pce(missing_path[LOGGERS], 500) == 0);
  EXPECT(first.warnings == 2 && first.progress == progress_before);

  /* The callback may not swap itself. */
  EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(CUZK_LOG_WARN, swaps_from_inside, &first, &err), &err);
  EXPECT(unsaved_pce(missing_path[LOGGERS], 500) == 0);
  EXPECT(first.warnings == 3);
  EXPECT(first.swap_from_inside == CUZK_OK); /* every inner attempt was CUZK_INVALID_ARGUMENT */

  /* Swapped and removed from this thread while others log. */
  pthread_t threads[LOGGERS];
  for (int i = 0; i < LOGGERS; i++) EXPECT(pthread_create(&threads[i], NULL, logger, (void *)(size_t)i) == 0);
  int late = 0, seen = 0;
  for (int round = 0; round < SWAPS; round++) {
    struct sink *s = malloc(sizeof *s);
    if (!s) return 1;
    sink_init(s, NULL);
    EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(round % 2 ? CUZK_LOG_INFO : CUZK_LOG_WARN, on_record, s, &err), &err);
    for (int spin = 0; spin < 1000; spin++) {
      pthread_mutex_lock(&s->mu);
      int n = s->records;
      pthread_mutex_unlock(&s->mu);
      if (n > 0) break;
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    /* Every third round removes the callback; the others replace it. */
    if (round % 3 == 0) EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(CUZK_LOG_INFO, NULL, NULL, &err), &err);
    else EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(CUZK_LOG_INFO, on_record, &first, &err), &err);
    pthread_mutex_lock(&s->mu);
    s->retired = 1;
    late += s->late_calls;
    seen += s->records > 0;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_destroy(&s->mu);
    free(s); /* a later call through it would be a use after free */
  }
  stop_logging = 1;
  for (int i = 0; i < LOGGERS; i++) {
    void *bad = NULL;
    EXPECT(pthread_join(threads[i], &bad) == 0);
    EXPECT(bad == NULL);
  }
  EXPECT(late == 0);
  EXPECT(seen > SWAPS / 2);
  printf("test_log: %d of %d swapped callbacks saw records\n", seen, SWAPS);

  EXPECT_STATUS(CUZK_OK, cuzk_set_log_callback(CUZK_LOG_INFO, NULL, NULL, &err), &err);
  pthread_mutex_destroy(&first.mu);
  pthread_mutex_destroy(&unused.mu);
  cleanup_dir();
  return finish("test_log");
}
