/*
 * command_info.c: statgpu info: the backend and device the engine uses.
 */
#include "tool.h"

int command_info(const options *opt, statgpu_context *context)
{
    (void)opt;
    statgpu_backend_report report;
    statgpu_context_backend_report(context, &report);
    char text[512];
    statgpu_backend_describe(&report, text, sizeof text);
    printf("statgpu %s\n%s\n", statgpu_version_string(), text);
    if (report.cuda_available)
        printf("backend: cuda\ndevice: %s\ncuda runtime: %d.%d\ncuda driver: %d.%d\n", report.device_name,
               report.cuda_runtime_version / 1000, report.cuda_runtime_version % 1000 / 10,
               report.cuda_driver_version / 1000, report.cuda_driver_version % 1000 / 10);
    else
        printf("backend: cpu\n");
    printf("cpu threads: %d\n", report.cpu_thread_count);
    if (report.note[0] != '\0')
        printf("note: %s\n", report.note);
    return 0;
}
