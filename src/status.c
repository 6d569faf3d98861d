/* status.c — names and messages for the status codes, generated from BG_STATUS_LIST. */
#include "bloomgate.h"

const char *bg_strerror(int status) {
  switch (status) {
#define BG_STATUS_MESSAGE(name, value, class, message) \
  case value:                                          \
    return message;
    BG_STATUS_LIST(BG_STATUS_MESSAGE)
#undef BG_STATUS_MESSAGE
  }
  return "unknown status code";
}

const char *bg_status_name(int status) {
  switch (status) {
#define BG_STATUS_NAME(name, value, class, message) \
  case value:                                       \
    return #name;
    BG_STATUS_LIST(BG_STATUS_NAME)
#undef BG_STATUS_NAME
  }
  return "E_UNKNOWN";
}
