#include "dss_base64.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <stdatomic.h>
#include <tmmintrin.h>

/* -1 unknown, 0 no, 1 yes. CPUID is asked once: in a virtual machine it traps to the host. */
static atomic_int dss_has_ssse3 = -1;

static int dss_ssse3(void) {
    int known = atomic_load_explicit(&dss_has_ssse3, memory_order_relaxed);
    if (known >= 0) return known;
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    int yes = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSSE3) != 0;
    atomic_store_explicit(&dss_has_ssse3, yes, memory_order_relaxed);
    return yes;
}

/* One block per turn. Validation: a character is in the alphabet when the bit of its high nibble
 * (2 to 7) is set in the entry of its low nibble; bytes of 0x80 and above have high nibbles 8 to F,
 * whose bit is 0. Translation: an offset by high nibble ('-' +17, digits +4, 'A'-'Z' -65, 'a'-'z'
 * -71), with '_' (high nibble 5, as 'P'-'Z') moved from -65 to -32. */
__attribute__((target("ssse3")))
static size_t dss_decode_ssse3(const uint8_t *in, size_t blocks, uint8_t *out, int *invalid) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i by_low = _mm_setr_epi8(0x2A, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3C, 0x14,
                                         0x14, 0x15, 0x14, 0x1C);
    const __m128i by_high = _mm_setr_epi8(0, 0, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m128i offsets = _mm_setr_epi8(0, 0, 17, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m128i underscore = _mm_set1_epi8('_');
    const __m128i underscore_fix = _mm_set1_epi8(33);
    const __m128i pairs = _mm_set1_epi32(0x01400140);   /* a * 64 + b for each two characters */
    const __m128i halves = _mm_set1_epi32(0x00011000);  /* ab * 4096 + cd for each four */
    const __m128i order = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    __m128i bad = _mm_setzero_si128();
    for (size_t i = 0; i < blocks; i++) {
        __m128i text = _mm_loadu_si128((const __m128i *)(const void *)(in + 16 * i));
        __m128i high = _mm_and_si128(_mm_srli_epi32(text, 4), nibble);
        __m128i low = _mm_and_si128(text, nibble);
        __m128i classes = _mm_and_si128(_mm_shuffle_epi8(by_low, low), _mm_shuffle_epi8(by_high, high));
        bad = _mm_or_si128(bad, _mm_cmpeq_epi8(classes, _mm_setzero_si128()));
        __m128i offset = _mm_shuffle_epi8(offsets, high);
        offset = _mm_add_epi8(offset, _mm_and_si128(_mm_cmpeq_epi8(text, underscore), underscore_fix));
        __m128i values = _mm_add_epi8(text, offset);
        __m128i packed = _mm_madd_epi16(_mm_maddubs_epi16(values, pairs), halves);
        _mm_storeu_si128((__m128i *)(void *)(out + 12 * i), _mm_shuffle_epi8(packed, order));
    }
    if (_mm_movemask_epi8(bad) != 0) *invalid = 1;
    return blocks;
}

size_t dss_base64url_decode_blocks(const uint8_t *in, size_t blocks, uint8_t *out, int *invalid) {
    if (in == NULL || out == NULL || invalid == NULL || blocks == 0 || !dss_ssse3()) return 0;
    return dss_decode_ssse3(in, blocks, out, invalid);
}

#else

size_t dss_base64url_decode_blocks(const uint8_t *in, size_t blocks, uint8_t *out, int *invalid) {
    (void)in;
    (void)blocks;
    (void)out;
    (void)invalid;
    return 0;
}

#endif
