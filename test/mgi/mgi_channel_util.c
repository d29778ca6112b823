/**
 * mgi_channel_test: helpers every case uses: a monotonic clock, the
 * deterministic random numbers the tuples are made from, environment
 * variables kept and put back, and libmgi's error log caught to check that
 * a refusal names the setting at fault.
 */

#include "mgi_channel_test.h"

double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix64(*s);
}

/* An environment variable's value kept (NULL: unset), and put back. */
char *env_keep(const char *name)
{
    const char *v = getenv(name);

    return (v != NULL) ? strdup(v) : NULL;
}

void env_restore(const char *name, char *kept)
{
    if (kept != NULL) {
        setenv(name, kept, 1);
        free(kept);
    } else {
        unsetenv(name);
    }
}

/* The error messages libmgi logs while a check runs (log_catch ..
 * log_said), to see that they name the setting at fault. */
char log_text[16384];

static ucs_log_func_rc_t log_catch_handler(const char *file, unsigned line,
                                           const char *function,
                                           ucs_log_level_t level,
                                           const ucs_log_component_config_t *c,
                                           const char *fmt, va_list ap)
{
    size_t len = strlen(log_text);
    va_list aq;

    if ((level <= UCS_LOG_LEVEL_ERROR) && (len + 1 < sizeof(log_text))) {
        va_copy(aq, ap);
        vsnprintf(log_text + len, sizeof(log_text) - len, fmt, aq);
        va_end(aq);
        strncat(log_text, "\n", sizeof(log_text) - strlen(log_text) - 1);
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

void log_catch(void)
{
    log_text[0] = '\0';
    ucs_log_push_handler(log_catch_handler);
}

/* Stops catching; whether an error said `what` meanwhile (else fails t). */
void log_said(test_t *t, const char *check, const char *what)
{
    ucs_log_pop_handler();
    if (strstr(log_text, what) == NULL) {
        FAIL(t, "%s: no error naming \"%s\" (said: %s)", check, what,
             log_text);
    }
}

const char *ret_string(long r)
{
    return (r < 0) ? ucs_status_string((ucs_status_t)r) :
           (r > 0) ? "bytes" : "OK / nothing";
}

/* -V: endpoint n's vertex, the n-th name of a comma-separated list (the
 * last one for the rest), or a printf format of n */
void vertex_name(const test_t *t, int n, char *buf, size_t len)
{
    const char *p = t->vertex_fmt, *c;

    if (strchr(p, ',') == NULL) {
        snprintf(buf, len, p, n);
        return;
    }
    for (; (n > 0) && ((c = strchr(p, ',')) != NULL); --n) {
        p = c + 1;
    }
    c = strchr(p, ',');
    snprintf(buf, len, "%.*s", (c != NULL) ? (int)(c - p) : (int)strlen(p),
             p);
}
