/* The hash behind cache keys and blob checksums. */
#include "cache/cache.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint64_t round64(uint64_t acc, uint64_t input)
{
    acc += input * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

uint64_t cache_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    size_t n = len;
    /* four independent accumulators, as xxHash64, so the multiplies overlap */
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    uint64_t h;
    if (n >= 32) {
        while (n >= 32) {
            v1 = round64(v1, load64(p));
            v2 = round64(v2, load64(p + 8));
            v3 = round64(v3, load64(p + 16));
            v4 = round64(v4, load64(p + 24));
            p += 32, n -= 32;
        }
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        uint64_t vs[4] = {v1, v2, v3, v4};
        for (int i = 0; i < 4; i++) h = (h ^ round64(0, vs[i])) * P1 + P4;
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    while (n >= 8) {
        h ^= round64(0, load64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8, n -= 8;
    }
    while (n--) {
        h ^= (*p++) * P5;
        h = rotl64(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

