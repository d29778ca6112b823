/**
 * mgi_info: libmgi's settings, as ucx_info shows UCX's.
 *
 *   mgi_info -c      every MGI_* setting with the value this process would
 *                    take (its environment, else the default)
 *   mgi_info -c -f   the same with each setting's help
 *   mgi_info -c -t   the test hooks (MGI_TEST_*) too, which are not user
 *                    settings
 * Exit status 2 where the environment holds what a context's create would
 * refuse (a removed setting, a value out of range), said on stderr.
 */
#include <mgi/mgi.h>

#include <stdio.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: mgi_info -c [-f] [-t]\n"
               "  -c  print libmgi's MGI_* settings and their values\n"
               "  -f  with each setting's help (ranges, defaults, why)\n"
               "  -t  the test hooks (MGI_TEST_*) too\n"
               "  -h  this help\n");
}

int main(int argc, char **argv)
{
    int config = 0, doc = 0;
    int c;

    while ((c = getopt(argc, argv, "cfth")) != -1) {
        switch (c) {
        case 'c':
            config = 1;
            break;
        case 'f':
            doc |= 1;
            break;
        case 't':
            doc |= 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 1;
        }
    }
    if (!config || (optind != argc)) {
        usage(stderr);
        return 1;
    }
    /* 2: the environment holds what a context would refuse (said) */
    return (mgi_config_print(stdout, doc) == UCS_OK) ? 0 : 2;
}
