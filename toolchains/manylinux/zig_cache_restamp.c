/* Makes a copy of Zig's runtime cache (:runtime, a tree artifact) valid where it is used.
 *
 *     zig_cache_restamp CACHE_DIR ZIG_LIB_DIR
 *
 * Zig's cache manifests (CACHE_DIR/h/<hex>) record each input file with the size, inode and
 * modification time it had when the entry was made, and Zig 0.17 counts an entry whose lib/
 * files show other stamps as a miss. A runtime built in one output base (or taken from the
 * disk or remote cache, or built on another worker) therefore never hits in another: each
 * link there rebuilt libc++, libunwind, compiler_rt and the glibc stubs, about 110 s a link
 * on two cores. Bazel already guarantees what the stamps stand for: the runtime action's key
 * holds the digest of every lib/ file it read, and the link reads the same files (@zig_sdk's
 * :zig). So the stamps of lib/ entries are rewritten to the files' stamps here; nothing else
 * changes. Built by @zig_sdk's bin/build_runtime into the runtime, run by bin/cc before
 * each link (toolchains/manylinux/extensions.bzl).
 *
 * Zig 0.17's manifest format (lib/std/Build/Cache.zig, Manifest.File): entries back to back,
 * each u64 size, u64 inode, i64 mtime in ns (little-endian), a 16-byte digest, a flags byte
 * (bit 0 directory, bit 1 metadata only, bits 2-7 the prefix: 1 is the lib directory), then
 * the path relative to the prefix and a NUL; NUL bytes may follow the last entry. A manifest
 * that does not parse is left as it is (the link is then only slower) and named on stderr.
 * Exit status 0 unless the arguments or the cache directory cannot be read.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { STAMP = 24, DIGEST = 16, FLAGS_AT = STAMP + DIGEST, PATH_AT = FLAGS_AT + 1, LIB_PREFIX = 1 };

static int restamp(unsigned char *buf, size_t size, const char *lib) {
    char path[4096];
    size_t at = 0;
    while (at < size) {
        if (size - at <= PATH_AT) {  /* the manifest's end: NUL padding, never a part of an entry */
            while (at < size) if (buf[at++] != 0) return -1;
            return 0;
        }
        const unsigned char *name = buf + at + PATH_AT;
        const unsigned char *nul = memchr(name, 0, size - at - PATH_AT);
        if (nul == NULL) return -1;
        unsigned flags = buf[at + FLAGS_AT];
        if ((flags >> 2) == LIB_PREFIX && !(flags & 2)) {
            struct stat st;
            if (snprintf(path, sizeof path, "%s/%s", lib, (const char *)name) >= (int)sizeof path) return -1;
            if (stat(path, &st) == 0 && (S_ISDIR(st.st_mode) != 0) == ((flags & 1) != 0)) {
                uint64_t stamp[3] = {(uint64_t)st.st_size, (uint64_t)st.st_ino,
                                     (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec};
                memcpy(buf + at, stamp, STAMP);  /* x86_64: little-endian, as Zig wrote them */
            }
        }
        at = (size_t)(nul - buf) + 1;
    }
    return 0;
}

static int restamp_file(const char *file, const char *lib) {
    FILE *f = fopen(file, "rb");
    if (f == NULL) return -1;
    struct stat st;
    unsigned char *buf = NULL;
    int ok = fstat(fileno(f), &st) == 0 && (buf = malloc(st.st_size ? st.st_size : 1)) != NULL &&
             fread(buf, 1, st.st_size, f) == (size_t)st.st_size;
    fclose(f);
    if (ok) ok = restamp(buf, st.st_size, lib) == 0;
    if (ok) {
        f = fopen(file, "wb");
        ok = f != NULL && fwrite(buf, 1, st.st_size, f) == (size_t)st.st_size;
        if (f != NULL && fclose(f) != 0) ok = 0;
    }
    free(buf);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CACHE_DIR ZIG_LIB_DIR\n", argv[0]);
        return 2;
    }
    char dir[4096], file[4096 + 256];
    snprintf(dir, sizeof dir, "%s/h", argv[1]);
    DIR *h = opendir(dir);
    if (h == NULL) {
        perror(dir);
        return 1;
    }
    struct dirent *entry;
    while ((entry = readdir(h)) != NULL) {
        /* Manifests are named by their 32-digit hex key; h/ also holds Zig's `timestamp` file. */
        if (strlen(entry->d_name) != 32 || strspn(entry->d_name, "0123456789abcdef") != 32) continue;
        snprintf(file, sizeof file, "%s/%s", dir, entry->d_name);
        if (restamp_file(file, argv[2]) != 0)
            fprintf(stderr, "zig_cache_restamp: %s is no Zig 0.17 manifest this program reads: left as it is "
                            "(links rebuild that part of Zig's runtime)\n", file);
    }
    closedir(h);
    return 0;
}
