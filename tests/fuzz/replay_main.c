/*
 * replay_main.c — runs fuzz_reader.c's checks over files, without libFuzzer.
 *
 * ctest uses it to replay the seed corpus and every input that ever broke the
 * reader (tests/fuzz/regressions/), under ASan/UBSan, on any compiler. A
 * broken invariant aborts, which fails the test.
 *   fuzz_replay FILE_OR_DIR...
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 0;
  }
  size_t cap = 4096, n = 0;
  uint8_t *data = malloc(cap);
  while (data) {
    n += fread(data + n, 1, cap - n, fp);
    if (n < cap) break;
    uint8_t *grown = realloc(data, cap * 2);
    if (!grown) break;
    data = grown;
    cap *= 2;
  }
  fclose(fp);
  if (!data) return 0;
  /* An exact-size copy, so ASan sees a read one byte past the input. */
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) {
    free(data);
    return 0;
  }
  memcpy(exact, data, n);
  free(data);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 1;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  long replayed = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "fuzz_replay: no such file or directory: %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (!replay_file(argv[i])) return 1;
      replayed++;
      continue;
    }
    DIR *dir = opendir(argv[i]);
    if (!dir) return 1;
    char **names = NULL;
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
      if (entry->d_name[0] == '.') continue;
      char **grown = realloc(names, (count + 1) * sizeof *names);
      if (!grown) return 1;
      names = grown;
      size_t len = strlen(argv[i]) + strlen(entry->d_name) + 2;
      names[count] = malloc(len);
      if (!names[count]) return 1;
      snprintf(names[count++], len, "%s/%s", argv[i], entry->d_name);
    }
    closedir(dir);
    qsort(names, count, sizeof *names, compare_names);
    for (size_t j = 0; j < count; j++) {
      printf("replay %s\n", names[j]);
      fflush(stdout);
      if (!replay_file(names[j])) return 1;
      replayed++;
      free(names[j]);
    }
    free(names);
  }
  printf("fuzz_replay: %ld inputs passed every reader invariant\n", replayed);
  return 0;
}
