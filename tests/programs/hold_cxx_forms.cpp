// Holds a known number of live heap bytes allocated through every form of
// C++ operator new (plain, array, nothrow, aligned, aligned nothrow) and
// frees them through every form of operator delete (plain, sized, nothrow,
// aligned, sized aligned), so that a heap probe which misses one entry point
// either never counts an allocation or subtracts a free it never counted.
// usage: hold_cxx_forms MIB HOLD_MS  (8 KiB blocks spread over the forms;
// prints the requested total and the allocator's usable total)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <thread>
#include <vector>

namespace {
constexpr std::size_t kBlock = 8192;
constexpr std::align_val_t kAlign{64};
constexpr int kForms = 8;

void *allocate(int form) {
    switch (form) {
    case 0: return ::operator new(kBlock);
    case 1: return ::operator new[](kBlock);
    case 2: return ::operator new(kBlock, std::nothrow);
    case 3: return ::operator new[](kBlock, std::nothrow);
    case 4: return ::operator new(kBlock, kAlign);
    case 5: return ::operator new[](kBlock, kAlign);
    case 6: return ::operator new(kBlock, kAlign, std::nothrow);
    default: return ::operator new[](kBlock, kAlign, std::nothrow);
    }
}

// Each allocation form is released by a matching delete form; the sized and
// nothrow deletes take turns with the plain ones.
void release(int form, void *p, bool alternate) {
    switch (form) {
    case 0:
        if (alternate) ::operator delete(p, kBlock); else ::operator delete(p);
        break;
    case 1:
        if (alternate) ::operator delete[](p, kBlock); else ::operator delete[](p);
        break;
    case 2: ::operator delete(p, std::nothrow); break;
    case 3: ::operator delete[](p, std::nothrow); break;
    case 4:
        if (alternate) ::operator delete(p, kBlock, kAlign); else ::operator delete(p, kAlign);
        break;
    case 5:
        if (alternate) ::operator delete[](p, kBlock, kAlign); else ::operator delete[](p, kAlign);
        break;
    case 6: ::operator delete(p, kAlign, std::nothrow); break;
    default: ::operator delete[](p, kAlign, std::nothrow); break;
    }
}
} // namespace

int main(int argc, char **argv) {
    long mib = argc > 1 ? std::atol(argv[1]) : 48;
    long hold_ms = argc > 2 ? std::atol(argv[2]) : 300;
    std::size_t target = static_cast<std::size_t>(mib) << 20;
    std::size_t count = target / kBlock;
    std::vector<void *> blocks(count);
    // A first pass that allocates and frees through every form: a probe that
    // counts one side only drifts here before anything is held.
    for (std::size_t i = 0; i < count; ++i) {
        int form = static_cast<int>(i % kForms);
        void *p = allocate(form);
        std::memset(p, 1, kBlock);
        release(form, p, (i / kForms) % 2 == 1);
    }
    std::size_t usable = 0;
    for (std::size_t i = 0; i < count; ++i) {
        blocks[i] = allocate(static_cast<int>(i % kForms));
        std::memset(blocks[i], 1, kBlock);
        usable += malloc_usable_size(blocks[i]);
    }
    std::printf("allocscope:mark held\nrequested %zu usable %zu\n", count * kBlock, usable);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    for (std::size_t i = 0; i < count; ++i)
        release(static_cast<int>(i % kForms), blocks[i], (i / kForms) % 2 == 0);
    return 0;
}
