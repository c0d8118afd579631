/* The sanitizer tier's own check: a program with one deliberate bug of each
 * kind, built with the tier's flags. Its reports must appear, or the tier
 * would pass without checking anything. usage: sanitizer_canary address|undefined */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (strcmp(argv[1], "address") == 0) {
        char *bytes = malloc(8);
        if (!bytes)
            return 2;
        memset(bytes, 'x', 8);
        size_t length = strlen(bytes);  /* no terminator: reads past the end */
        free(bytes);
        return length == 8 ? 0 : 1;
    }
    if (strcmp(argv[1], "undefined") == 0) {
        int big = INT_MAX - 2 + argc;  /* INT_MAX; argc hides it from the compiler */
        return big + argc > 0 ? 0 : 1; /* signed overflow */
    }
    return 2;
}
