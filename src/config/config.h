/* Project settings: finds the configuration file that governs a path, reads it, merges the
 * command-line overrides, and answers "which rules for this file" and "is this path excluded".
 * Shared by the CLI (once per run) and the LSP server (once per document, reloaded on change).
 *
 * Discovery is ruff's: for a file, walk up from its directory; the first directory holding a
 * `gradleak.toml`, or a `pyproject.toml` with a `[tool.gradleak]` table, wins (gradleak.toml first
 * when a directory has both). No file found: the defaults (every rule on), rooted at the cwd.
 * Patterns (`exclude`, `per-file-ignores`) are relative to the directory of the file they are in.
 *
 * Typical use:
 *     ConfigOverrides ov;  config_overrides_init(&ov);   ... fill from flags ...
 *     Config *cfg = config_new(&ov);
 *     const Settings *s;  ConfigError err;
 *     if (config_settings_for(cfg, "pkg/train.py", &s, &err) < 0) { print err.message; exit 2; }
 *     if (!settings_excluded(s, "pkg/train.py")) { RuleSet r; settings_rules_for(s, "pkg/train.py", &r); ... }
 *     config_reload(cfg);   // a configuration file changed (LSP): forget what was read
 *     config_free(cfg);
 */
#ifndef GL_CONFIG_H
#define GL_CONFIG_H

#include "base/array.h"
#include "base/rule_catalog.h"

/* The keys of [tool.gradleak] / gradleak.toml, in the order error messages list them. */
#define CONFIG_KEYS "select, ignore, extend-select, per-file-ignores, exclude, extend-exclude, torch-version, jobs"


/* One `per-file-ignores` entry: codes ignored in files matching glob (or NOT matching, when negated). */
typedef struct PerFileIgnore {
    char *glob;
    bool negated; /* the key started with '!' */
    RuleSet codes;
} PerFileIgnore;

/* Rule selection changes, applied in order: select replaces the set, extend-select adds, ignore
 * removes. Code lists take codes, prefixes (GL3), names and ALL, as the flags do. */
typedef enum RuleOpKind { RULE_OP_SELECT, RULE_OP_EXTEND, RULE_OP_IGNORE } RuleOpKind;
typedef struct RuleOp {
    RuleOpKind kind;
    RuleSet codes;
} RuleOp;

/* What one configuration file (plus the overrides) resolves to. Owned by the Config that handed it
 * out; valid until config_reload or config_free. */
typedef struct Settings {
    char *config_path;            /* the file read, or NULL for the defaults */
    char *root;                   /* absolute directory the patterns are relative to */
    RuleSet rules;                /* selection after the file and the flags (before per-file-ignores) */
    Array(PerFileIgnore) per_file_ignores;
    Array(char *) exclude;        /* exclude + extend-exclude (the built-in folder list is walk.c's) */
    TorchVersion torch;           /* torch-version, or 0.0 */
    int jobs;                     /* jobs from the file or -j; 0 = not set (use the cores) */
    uint64_t hash;                /* of everything above that changes findings (for the cache key) */
} Settings;

/* Command-line flags that override every configuration file. */
typedef struct ConfigOverrides {
    Array(RuleOp) rule_ops;       /* --select / --extend-select / --ignore, in the order given */
    Array(char *) exclude;        /* --exclude: replaces the files' exclude (owned) */
    bool has_exclude;
    Array(char *) extend_exclude; /* --extend-exclude: added (owned) */
    TorchVersion torch;           /* --torch-version, 0.0 = not given */
    int jobs;                     /* -j, 0 = not given */
    char *config_file;            /* --config FILE: use this file for every path (owned), or NULL */
    bool isolated;                /* --isolated: read no configuration file */
} ConfigOverrides;

/* A tool failure while reading a configuration file: "path:line:col: message" and what is valid. */
typedef struct ConfigError {
    char message[1024];
} ConfigError;

typedef struct Config Config;

void config_overrides_init(ConfigOverrides *ov);
void config_overrides_free(ConfigOverrides *ov);

/* Parses a comma- or space-separated list of codes, prefixes, names or ALL into *out (cleared
 * first). Returns 0, or -1 with the offending token in err ("unknown rule 'GL999'"). */
int config_parse_codes(const char *list, RuleSet *out, ConfigError *err);
/* "2.1", "1.13.1", "0.4" -> *out and 0; anything else -> -1. */
int config_parse_torch_version(const char *s, TorchVersion *out);

/* Takes ownership of the overrides' contents (ov is left empty). Never fails. */
Config *config_new(ConfigOverrides *ov);
void config_free(Config *c);
/* Forgets every configuration file read so far; the next config_settings_for reads them again.
 * Settings pointers handed out before are invalid afterwards. */
void config_reload(Config *c);

/* The settings that govern path (a file or a directory; relative to the cwd or absolute). Files
 * are read once per Config and cached by directory. Returns 0 with *out set, or -1 with err filled
 * when the governing file is unreadable or invalid (unknown key, wrong type, bad code): the CLI
 * exits 2 with err.message. Thread-safe. */
int config_settings_for(Config *c, const char *path, const Settings **out, ConfigError *err);

/* The rules for one file: s->rules minus the per-file-ignores that match path. */
void settings_rules_for(const Settings *s, const char *path, RuleSet *out);
/* True when path, or one of its parent folders below s->root, matches exclude/extend-exclude
 * (is this file excluded? --force-exclude and the LSP ask this). */
bool settings_excluded(const Settings *s, const char *path);
/* True when path itself matches: what a directory walk asks of each entry, having pruned the
 * excluded folders already (so a folder named on the command line is walked, as ruff does). */
bool settings_excluded_entry(const Settings *s, const char *path);

/* Reads one configuration file into *out (a pyproject.toml without [tool.gradleak] gives the
 * defaults). Exposed for tests and for the LSP's "is this file valid?"; config_settings_for does
 * this for you. Returns 0, or -1 with err. Free with settings_free. */
int config_load_file(const char *path, const ConfigOverrides *ov, Settings *out, ConfigError *err);
void settings_free(Settings *s);

/* Absolute, lexically normalised form of path (relative to the cwd; "." and ".." resolved, symlinks
 * not followed). gl_free it. */
char *config_abspath(const char *path);

/* Glob matching as exclude and per-file-ignores use it: `*` and `?` stay within one path
 * component, `**` spans components (`**` followed by a slash also matches no folder at all), `[a-z]`/`[!a]` classes, `\`
 * escapes. Exposed for tests. */
bool config_glob_match(const char *pattern, const char *text);

#endif
