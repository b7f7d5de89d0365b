/* Parameter blocks that travel as a task's by-value bytes are planning
 * inputs: every rank hashes them (the uniformity hash, compared at every
 * region's end), so every byte must be a named, initialised field. Between
 * DG_NOPAD_BEGIN and DG_NOPAD_END a struct the compiler would pad is a
 * compile error (-Wpadded): name the padding as a field instead. */
#ifndef DG_BASE_NOPAD_H
#define DG_BASE_NOPAD_H

#define DG_NOPAD_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic error \"-Wpadded\"")
#define DG_NOPAD_END _Pragma("GCC diagnostic pop")

#endif
