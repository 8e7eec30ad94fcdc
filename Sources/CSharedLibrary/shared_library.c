#include "sr_shared_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

const char *sr_shared_library_load(struct sr_shared_library *library) {
    pthread_mutex_lock(&library->lock);
    if (library->state == 0) {
        library->state = 2;
        void *handle = dlopen(library->file, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *reason = dlerror();
            snprintf(library->error, sizeof library->error, "%s", reason ? reason : "unknown reason");
        } else {
            unsigned i;
            for (i = 0; i < library->count && dlsym(handle, library->names[i]); i++) {}
            if (i < library->count) {
                snprintf(library->error, sizeof library->error, "%s has no function %s", library->file, library->names[i]);
            } else {
                for (i = 0; i < library->count; i++)
                    __atomic_store_n(&library->slots[i], dlsym(handle, library->names[i]), __ATOMIC_RELEASE);
                library->state = 1;
            }
        }
    }
    const char *error = library->state == 1 ? NULL : library->error;
    pthread_mutex_unlock(&library->lock);
    return error;
}

void *sr_shared_library_require(struct sr_shared_library *library, unsigned index) {
    const char *error = sr_shared_library_load(library);
    if (error) {
        fprintf(stderr, "cannot load %s: %s\n", library->file, error);
        abort();
    }
    return library->slots[index];
}
