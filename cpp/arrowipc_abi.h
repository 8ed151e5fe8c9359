/* The Arrow C data interface and C stream interface structs, as the specification defines them
 * (https://arrow.apache.org/docs/format/CDataInterface.html, CStreamInterface.html).
 *
 * These definitions are an ABI: field order and types must never change. The include guards are
 * the ones the specification prescribes, so this header can coexist with any other copy of the
 * same definitions (nanoarrow, Arrow C++, DuckDB...) in one translation unit. */
#ifndef ARROWIPC_ABI_H
#define ARROWIPC_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Type description */
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  /* Release callback: NULL once released (or moved) */
  void (*release)(struct ArrowSchema*);
  /* Opaque producer-specific data */
  void* private_data;
};

struct ArrowArray {
  /* Data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  /* Release callback: NULL once released (or moved) */
  void (*release)(struct ArrowArray*);
  /* Opaque producer-specific data */
  void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  /* Fill *out with the stream's schema; 0 or an errno-compatible error code. */
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  /* Fill *out with the next array; end of stream is 0 with out->release == NULL. */
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  /* Description of the last error (valid until the next call), or NULL. */
  const char* (*get_last_error)(struct ArrowArrayStream*);

  /* Release callback: NULL once released (or moved) */
  void (*release)(struct ArrowArrayStream*);
  /* Opaque producer-specific data */
  void* private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

#ifdef __cplusplus
}
#endif

#endif /* ARROWIPC_ABI_H */
