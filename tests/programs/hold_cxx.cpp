// Holds a known number of live heap bytes with new[]/delete[] for a while.
// usage: hold_cxx MIB HOLD_MS  (8 KiB blocks; prints the requested total)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
    long mib = argc > 1 ? std::atol(argv[1]) : 100;
    long hold_ms = argc > 2 ? std::atol(argv[2]) : 1000;
    size_t target = static_cast<size_t>(mib) << 20;
    std::vector<char *> blocks;
    blocks.reserve(target / 8192);
    for (size_t total = 0; total < target; total += 8192) {
        char *p = new char[8192];
        std::memset(p, 1, 8192);
        blocks.push_back(p);
    }
    std::printf("allocscope:mark held\nrequested %zu usable %zu\n", target, target);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    for (char *p : blocks) delete[] p;
    return 0;
}
