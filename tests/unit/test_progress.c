/* nfs-client-demo's progress line. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "progress.h"

Test(progress, format)
{
	char buf[128];

	progress_format(buf, sizeof(buf), "get", 32u << 20, 64u << 20, 2.0);
	cr_assert_str_eq(buf, "get  50% 32.0/64.0 MiB  16.8 MB/s  ETA 0:02");
	progress_format(buf, sizeof(buf), "put", 0, 64u << 20, 0.0);
	cr_assert_str_eq(buf, "put   0% 0.0/64.0 MiB  0.0 MB/s  ETA --:--");
	progress_format(buf, 10, "put", 1, 2, 1.0);
	cr_assert_str_eq(buf, "put  50% ", "cut to the buffer");
}

Test(progress, silent_off_a_terminal_and_for_small_files)
{
	char out[256] = "";
	FILE *f = fmemopen(out, sizeof(out), "w");
	struct progress p;

	progress_start(&p, f, false, "get", 64u << 20, 0);
	progress_update(&p, 1u << 20, 1.0);
	progress_end(&p);
	progress_start(&p, f, true, "get", PROGRESS_MIN_BYTES, 0);
	progress_update(&p, 1, 1.0);
	progress_end(&p);
	fflush(f);
	cr_assert_eq(ftell(f), 0, "nothing drawn");
	progress_start(&p, f, true, "get", 64u << 20, 0);
	progress_update(&p, 32u << 20, 1.0);
	progress_end(&p);
	fclose(f);
	cr_assert_not_null(strstr(out, "get  50%"));
}
