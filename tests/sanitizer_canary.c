/* The sanitizer tier's own check: a program with one deliberate bug of each
 * kind, built with the tier's flags. Its reports must appear, or the tier
 * would pass without checking anything.
 * usage: sanitizer_canary address|undefined|thread */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int shared_count;

static void *add_one(void *argument)
{
    (void)argument;
    ++shared_count;  /* unsynchronised: the two threads race */
    return NULL;
}

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
    if (strcmp(argv[1], "thread") == 0) {
        pthread_t first, second;
        if (pthread_create(&first, NULL, add_one, NULL) != 0 || pthread_create(&second, NULL, add_one, NULL) != 0)
            return 2;
        pthread_join(first, NULL);
        pthread_join(second, NULL);
        return shared_count > 0 ? 0 : 1;
    }
    return 2;
}
