// Exercises the libgpiod shim (Sources/CGPIOD/shim.h) on a gpio-sim chip: built once against
// libgpiod v1 and once against v2, run in the QEMU guest by GPIOShimTests. Prints one line per
// check: CHECK <name> <what it saw>.
//
//   shim-check /dev/gpiochipN /sys/devices/platform/gpio-sim.0/gpiochipN
#include "shim.h"
#include <stdio.h>

static int sim_value(const char *sim, int line) {
    char path[256], c = '?';
    snprintf(path, sizeof path, "%s/sim_gpio%d/value", sim, line);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    if (fread(&c, 1, 1, f) != 1) c = '?';
    fclose(f);
    return c == '1';
}

static void sim_pull(const char *sim, int line, const char *pull) {
    char path[256];
    snprintf(path, sizeof path, "%s/sim_gpio%d/pull", sim, line);
    FILE *f = fopen(path, "w");
    if (f) { fputs(pull, f); fclose(f); }
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *chip = argv[1], *sim = argv[2];
    printf("CHECK api %s\n", flap_gpio_api());
    printf("CHECK lines %d\n", flap_gpio_chip_lines(chip));
    errno = 0;
    printf("CHECK missing-chip %d\n", flap_gpio_chip_lines("/dev/gpiochip99") < 0 ? errno : 0);

    unsigned out_lines[3] = {0, 1, 2};
    // Outputs come up at the levels asked for (an ENABLE active low, a DIR forward high): the
    // request itself sets them, before anyone could write.
    int idle[3] = {1, 1, 0};
    flap_gpio_request *out = flap_gpio_request_lines(chip, out_lines, 3, 1, idle, 0, "shim-check");
    if (!out) { printf("CHECK outputs failed %d\n", errno); return 1; }
    printf("CHECK outputs-start %d%d%d\n", sim_value(sim, 0), sim_value(sim, 1), sim_value(sim, 2));
    int a[3] = {1, 0, 1}, b[3] = {0, 1, 1};
    flap_gpio_set(out, a);
    printf("CHECK outputs-a %d%d%d\n", sim_value(sim, 0), sim_value(sim, 1), sim_value(sim, 2));
    flap_gpio_set(out, b);
    printf("CHECK outputs-b %d%d%d\n", sim_value(sim, 0), sim_value(sim, 1), sim_value(sim, 2));
    errno = 0;
    flap_gpio_request *again = flap_gpio_request_lines(chip, out_lines, 1, 1, NULL, 0, "shim-check");
    printf("CHECK busy %d\n", again ? 0 : errno);
    flap_gpio_release(out);

    // Hall-effect home sensors: active low, requested with pull-up bias (which gpio-sim applies
    // to the simulated line); the magnet pulling a line down is a falling edge.
    unsigned in_lines[2] = {4, 5};
    flap_gpio_request *in = flap_gpio_request_lines(chip, in_lines, 2, 0, NULL, 1, "shim-check");
    if (!in) { printf("CHECK inputs failed %d\n", errno); return 1; }
    int v[2] = {-1, -1};
    flap_gpio_get(in, v);
    printf("CHECK inputs-start %d%d\n", v[0], v[1]);
    unsigned index = 9; int rising = -1; uint64_t ns = 0;
    printf("CHECK no-edge %d\n", flap_gpio_read_edge(in, 50000000, &index, &rising, &ns));
    sim_pull(sim, 4, "pull-down");
    int got = flap_gpio_read_edge(in, 2000000000, &index, &rising, &ns);
    printf("CHECK edge-1 %d line %u rising %d stamped %d\n", got, index, rising, ns > 0);
    sim_pull(sim, 4, "pull-up");
    got = flap_gpio_read_edge(in, 2000000000, &index, &rising, &ns);
    printf("CHECK edge-2 %d line %u rising %d\n", got, index, rising);
    sim_pull(sim, 5, "pull-down");
    got = flap_gpio_read_edge(in, 2000000000, &index, &rising, &ns);
    printf("CHECK edge-3 %d line %u rising %d\n", got, index, rising);
    flap_gpio_get(in, v);
    printf("CHECK inputs-end %d%d\n", v[0], v[1]);
    flap_gpio_release(in);
    printf("CHECK done\n");
    return 0;
}
