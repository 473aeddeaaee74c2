#include "dss_base64.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

/* -1 unknown, 0 no, 1 yes: AVX2 needs the CPU's bit and the OS saving the YMM registers (XCR0
 * bits 1 and 2). CPUID is asked once: in a virtual machine it traps to the host. */
static atomic_int dss_has_avx2 = -1;

static int dss_avx2(void) {
    int known = atomic_load_explicit(&dss_has_avx2, memory_order_relaxed);
    if (known >= 0) return known;
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    unsigned int xcr0 = 0, xcr0_high = 0;
    int yes = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_OSXSAVE) != 0 && (ecx & bit_AVX) != 0) {
        __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
        yes = (xcr0 & 6) == 6 && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_AVX2) != 0;
    }
    atomic_store_explicit(&dss_has_avx2, yes, memory_order_relaxed);
    return yes;
}

/* One pair of blocks per turn, each 128-bit half one block (AVX2's byte shuffles work within a
 * half, so every table is in both halves). Validation: a character is in the alphabet when the
 * bit of its high nibble (2 to 7) is set in the entry of its low nibble; bytes of 0x80 and above
 * have high nibbles 8 to F, whose bit is 0. Translation: an offset by high nibble ('-' +17,
 * digits +4, 'A'-'Z' -65, 'a'-'z' -71), with '_' (high nibble 5, as 'P'-'Z') moved from -65 to
 * -32. Packing: two multiply-adds make each four characters 24 bits of a 32-bit lane, a shuffle
 * puts each half's 12 bytes in order and a permutation joins them. */
#define DSS_BY_LOW 0x2A, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3E, 0x3C, 0x14, 0x14, 0x15, 0x14, 0x1C
#define DSS_BY_HIGH 0, 0, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0, 0, 0, 0, 0, 0, 0, 0
#define DSS_OFFSETS 0, 0, 17, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0
#define DSS_ORDER 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1

__attribute__((target("avx2")))
static void dss_decode_avx2(const uint8_t *in, size_t pairs_of_blocks, uint8_t *out, int *invalid) {
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i by_low = _mm256_setr_epi8(DSS_BY_LOW, DSS_BY_LOW);
    const __m256i by_high = _mm256_setr_epi8(DSS_BY_HIGH, DSS_BY_HIGH);
    const __m256i offsets = _mm256_setr_epi8(DSS_OFFSETS, DSS_OFFSETS);
    const __m256i underscore = _mm256_set1_epi8('_');
    const __m256i underscore_fix = _mm256_set1_epi8(33);
    const __m256i pairs = _mm256_set1_epi32(0x01400140);   /* a * 64 + b for each two characters */
    const __m256i halves = _mm256_set1_epi32(0x00011000);  /* ab * 4096 + cd for each four */
    const __m256i order = _mm256_setr_epi8(DSS_ORDER, DSS_ORDER);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);  /* the halves' 12 bytes, adjacent */
    __m256i bad = _mm256_setzero_si256();
    for (size_t i = 0; i < pairs_of_blocks; i++) {
        __m256i text = _mm256_loadu_si256((const __m256i *)(const void *)(in + 32 * i));
        __m256i high = _mm256_and_si256(_mm256_srli_epi32(text, 4), nibble);
        __m256i low = _mm256_and_si256(text, nibble);
        __m256i classes = _mm256_and_si256(_mm256_shuffle_epi8(by_low, low), _mm256_shuffle_epi8(by_high, high));
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi8(classes, _mm256_setzero_si256()));
        __m256i offset = _mm256_shuffle_epi8(offsets, high);
        offset = _mm256_add_epi8(offset, _mm256_and_si256(_mm256_cmpeq_epi8(text, underscore), underscore_fix));
        __m256i values = _mm256_add_epi8(text, offset);
        __m256i packed = _mm256_madd_epi16(_mm256_maddubs_epi16(values, pairs), halves);
        __m256i ordered = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(packed, order), join);
        _mm256_storeu_si256((__m256i *)(void *)(out + 24 * i), ordered);
    }
    if (_mm256_movemask_epi8(bad) != 0) *invalid = 1;
}

size_t dss_base64url_decode_pairs(const uint8_t *in, size_t pairs_of_blocks, uint8_t *out, int *invalid) {
    if (in == NULL || out == NULL || invalid == NULL || pairs_of_blocks == 0 || !dss_avx2()) return 0;
    dss_decode_avx2(in, pairs_of_blocks, out, invalid);
    return pairs_of_blocks;
}

#else

size_t dss_base64url_decode_pairs(const uint8_t *in, size_t pairs_of_blocks, uint8_t *out, int *invalid) {
    (void)in;
    (void)pairs_of_blocks;
    (void)out;
    (void)invalid;
    return 0;
}

#endif
