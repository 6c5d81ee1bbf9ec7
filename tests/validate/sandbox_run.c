/* Test driver for the validation sandbox: runs a command through val_sandbox_run with the same
 * scrubbed environment `gradleak validate` builds, then prints what happened, one key=value a line,
 * followed by the captured stdout and stderr.
 *
 *   sandbox_run [--timeout S] [--fsize BYTES] [--procs N] [--no-ns] [--no-cgroup] [--no-fs] [--cuda]
 *               [--rw DIR]... [--ro DIR]... -- COMMAND [ARGS...]
 *
 * Without --rw the current folder is the one writable folder (it is also HOME and TMPDIR). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "validate/val_env.h"
#include "validate/val_sandbox.h"

int main(int argc, char **argv)
{
    ValSandboxOpts o;
    memset(&o, 0, sizeof o);
    o.timeout_s = 10;
    bool cuda = false;
    const char *rw[16] = {0}, *ro[16] = {0};
    int nrw = 0, nro = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc) o.timeout_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--fsize") && i + 1 < argc) o.fsize_bytes = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--procs") && i + 1 < argc) o.max_procs = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-ns")) o.no_namespaces = true;
        else if (!strcmp(argv[i], "--cuda")) cuda = true;
        else if (!strcmp(argv[i], "--no-cgroup")) o.no_cgroup = true;
        else if (!strcmp(argv[i], "--no-fs")) o.no_fs_isolation = true;
        else if (!strcmp(argv[i], "--rw") && i + 1 < argc && nrw < 15) rw[nrw++] = argv[++i];
        else if (!strcmp(argv[i], "--ro") && i + 1 < argc && nro < 15) ro[nro++] = argv[++i];
        else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            fprintf(stderr, "usage: sandbox_run [--timeout S] [--fsize BYTES] [--procs N] [--no-ns] -- COMMAND...\n");
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "sandbox_run: no command\n");
        return 2;
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return 2;
    ValEnvOpts eo;
    memset(&eo, 0, sizeof eo);
    eo.home = cwd;
    eo.tmpdir = cwd;
    eo.cuda = cuda;
    char **env = val_env_build(&eo);
    o.argv = argv + i;
    o.envp = env;
    o.cwd = cwd;
    o.gpu = cuda;
    if (nrw) o.rw_paths = rw;
    if (nro) o.ro_paths = ro;
    ValSandboxResult r;
    char *why = NULL;
    if (val_sandbox_run(&o, &r, &why) != 0) {
        printf("error=%s\n", why);
        gl_free(why);
        val_env_free(env);
        return 1;
    }
    printf("exit=%d\nsignal=%d\ntimed_out=%d\nwall=%.3f\npidns=%d\nnetns=%d\ncgroup=%d\nnproc=%d\nfs=%d\npid=%ld\nnote=%s\n",
           r.exit_code, r.term_signal, r.timed_out, r.wall_s, !!(r.isolation & VAL_ISO_PIDNS),
           !!(r.isolation & VAL_ISO_NETNS), !!(r.isolation & VAL_ISO_CGROUP), !!(r.isolation & VAL_ISO_NPROC),
           !!(r.isolation & VAL_ISO_FS), (long)r.pid, r.note ? r.note : "");
    printf("--- stdout\n%s\n--- stderr\n%s\n", r.out_tail, r.err_tail);
    val_sandbox_result_free(&r);
    val_env_free(env);
    return 0;
}
