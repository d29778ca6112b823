/**
 * cuda_mgi: GPU memory shared between the processes of one host (see
 * cuda_mgi_ipc.h).
 *
 * The mapping cache.  Mapping a handle costs tens of microseconds to
 * milliseconds, so a mapping outlives the operations that use it.  Rules:
 *
 *  - An entry is named by (context, exporting process, allocation base);
 *    the context is NULL for VMM handles, whose mappings serve the whole
 *    process.  The exporting process is its pid and start time.
 *  - An entry is valid for a key when length and buffer id match too.
 *  - The allocations of one process never overlap while they live.  So an
 *    entry of the same process and context whose range overlaps a new
 *    key's, with another base, length or buffer id, is of memory the
 *    exporter has freed: it leaves the cache (stale).  This is checked
 *    when a key misses, the only time a new mapping is made.
 *  - Users hold references (an unpacked remote key, a copy in flight); a
 *    stale entry is closed when the last reference goes, a valid one stays
 *    cached until its peer is forgotten (its endpoints are destroyed) or
 *    the process ends.
 *  - One lock guards the cache: UCX may call from several threads.  The
 *    references are atomic, so an operation takes and drops its own
 *    without the lock; a count can reach 0 only after the entry left the
 *    cache (the cache holds one while it has the entry).
 *  - A hit of a legacy or own handle makes no driver call: its entry is
 *    named by the context the caller passes, and needs no device.
 *
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_ipc.h"
#include "cuda_mgi_ucx.h"

#include <ucs/datastruct/khash.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


/* the packed key's layout is the wire format */
_Static_assert(sizeof(uct_cuda_mgi_rkey_t) == 128,
               "uct_cuda_mgi_rkey_t has padding or a changed field");
_Static_assert(sizeof(CUipcMemHandle) <= 64, "CUipcMemHandle grew");


typedef struct {
    CUcontext ctx;
    int32_t   pid;
    uint64_t  proc_start;
    uint64_t  base;
} uct_cuda_mgi_map_key_t;


static inline khint32_t uct_cuda_mgi_map_key_hash(uct_cuda_mgi_map_key_t k)
{
    return kh_int64_hash_func((uint64_t)(uintptr_t)k.ctx ^
                              ((uint64_t)k.pid << 40) ^ k.proc_start ^
                              k.base);
}


static inline int uct_cuda_mgi_map_key_equal(uct_cuda_mgi_map_key_t a,
                                             uct_cuda_mgi_map_key_t b)
{
    return (a.ctx == b.ctx) && (a.pid == b.pid) &&
           (a.proc_start == b.proc_start) && (a.base == b.base);
}


KHASH_INIT(uct_cuda_mgi_map, uct_cuda_mgi_map_key_t, uct_cuda_mgi_mapping_t*,
           1, uct_cuda_mgi_map_key_hash, uct_cuda_mgi_map_key_equal);


static struct {
    pthread_mutex_t          lock;
    khash_t(uct_cuda_mgi_map) hash;
    uint64_t                 own_start;   /* this process's start time */
    pid_t                    own_pid;     /* a CUDA process cannot fork */
    int                      initialized;
} uct_cuda_mgi_ipc = {
    .lock = PTHREAD_MUTEX_INITIALIZER
};


static const char *uct_cuda_mgi_handle_type_names[] = {
    [UCT_CUDA_MGI_HANDLE_NONE]     = "none",
    [UCT_CUDA_MGI_HANDLE_LEGACY]   = "legacy IPC",
    [UCT_CUDA_MGI_HANDLE_POSIX_FD] = "POSIX file descriptor",
    [UCT_CUDA_MGI_HANDLE_FABRIC]   = "fabric"
};


const char *uct_cuda_mgi_handle_type_name(unsigned type)
{
    return (type < UCT_CUDA_MGI_HANDLE_LAST) ?
           uct_cuda_mgi_handle_type_names[type] : "unknown";
}


const char *uct_cuda_mgi_cu_error(CUresult cu_err)
{
    static __thread char buf[256];
    const char *name = NULL, *str = NULL;

    /* each pointer is read only where its call said it set it */
    if ((cuGetErrorName(cu_err, &name) != CUDA_SUCCESS) || (name == NULL)) {
        name = NULL;
    }
    if ((cuGetErrorString(cu_err, &str) != CUDA_SUCCESS) || (str == NULL)) {
        str = NULL;
    }
    if ((name == NULL) && (cu_err == CUDA_ERROR_STUB_LIBRARY)) {
        /* the toolkit's stub libcuda can name nothing */
        return "CUDA_ERROR_STUB_LIBRARY: the stub libcuda.so is loaded, no "
               "NVIDIA driver is installed";
    }
    if (name == NULL) {
        snprintf(buf, sizeof(buf), "CUDA driver error %d%s%s", (int)cu_err,
                 (str != NULL) ? ": " : "", (str != NULL) ? str : "");
    } else {
        snprintf(buf, sizeof(buf), "%s: %s", name,
                 (str != NULL) ? str : "(the driver gave no description)");
    }
    return buf;
}


/* Called with the lock held */
static void uct_cuda_mgi_ipc_init(void)
{
    if (!uct_cuda_mgi_ipc.initialized) {
        kh_init_inplace(uct_cuda_mgi_map, &uct_cuda_mgi_ipc.hash);
        uct_cuda_mgi_ipc.own_pid   = getpid();
        uct_cuda_mgi_ipc.own_start =
                ucs_sys_get_proc_create_time(uct_cuda_mgi_ipc.own_pid);
        __atomic_store_n(&uct_cuda_mgi_ipc.initialized, 1, __ATOMIC_RELEASE);
    }
}


/* This process's pid and start time, set once: read without the lock and
 * without a system call, since every remote key unpacked asks */
static void uct_cuda_mgi_ipc_own(pid_t *pid_p, uint64_t *start_p)
{
    if (!__atomic_load_n(&uct_cuda_mgi_ipc.initialized, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&uct_cuda_mgi_ipc.lock);
        uct_cuda_mgi_ipc_init();
        pthread_mutex_unlock(&uct_cuda_mgi_ipc.lock);
    }
    *pid_p   = uct_cuda_mgi_ipc.own_pid;
    *start_p = uct_cuda_mgi_ipc.own_start;
}


static uint64_t uct_cuda_mgi_ipc_own_start(void)
{
    uint64_t start;
    pid_t pid;

    uct_cuda_mgi_ipc_own(&pid, &start);
    return start;
}


int uct_cuda_mgi_ipc_key_is_own(const uct_cuda_mgi_rkey_t *key)
{
    uint64_t start;
    pid_t pid;

    uct_cuda_mgi_ipc_own(&pid, &start);
    return (key->pid == pid) && (key->proc_start == start);
}


/* ---- export -------------------------------------------------------------- */

/* The VMM allocation that holds address, exported as a shareable handle of
 * type (a CU_MEM_HANDLE_TYPE_*) into out */
static CUresult uct_cuda_mgi_ipc_export_vmm(void *address,
                                            CUmemAllocationHandleType type,
                                            void *out)
{
    CUmemGenericAllocationHandle handle;
    CUresult cu_err;

    cu_err = cuMemRetainAllocationHandle(&handle, address);
    if (cu_err != CUDA_SUCCESS) {
        return cu_err;
    }
    cu_err = cuMemExportToShareableHandle(out, handle, type, 0);
    cuMemRelease(handle);
    return cu_err;
}


ucs_status_t uct_cuda_mgi_ipc_export(void *address, CUdevice device,
                                     uct_cuda_mgi_memh_t *memh,
                                     ucs_log_level_t level)
{
    uct_cuda_mgi_rkey_t *key     = &memh->key;
    int legacy_capable           = 0;
    unsigned long long buffer_id = 0;
    uint64_t allowed             = 0;
    CUpointer_attribute attr_type[3];
    CUdeviceptr base;
    void *attr_data[3];
    const char *what;
    CUresult cu_err;
    size_t length;

    memset(key, 0, sizeof(*key));
    memh->fd = -1;

    attr_type[0] = CU_POINTER_ATTRIBUTE_BUFFER_ID;
    attr_data[0] = &buffer_id;
    attr_type[1] = CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE;
    attr_data[1] = &legacy_capable;
    attr_type[2] = CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES;
    attr_data[2] = &allowed;
    what         = "cuPointerGetAttributes";
    cu_err       = cuPointerGetAttributes(3, attr_type, attr_data,
                                          (CUdeviceptr)address);
    if (cu_err == CUDA_SUCCESS) {
        what   = "cuMemGetAddressRange";
        cu_err = cuMemGetAddressRange(&base, &length, (CUdeviceptr)address);
    }
    if (cu_err == CUDA_SUCCESS) {
        what   = "cuDeviceGetUuid";
        cu_err = cuDeviceGetUuid(&key->uuid, device);
    }
    if (cu_err != CUDA_SUCCESS) {
        ucs_log(level, "cuda_mgi: cannot export GPU memory at %p: %s: %s",
                address, what, uct_cuda_mgi_cu_error(cu_err));
        return UCS_ERR_IO_ERROR;
    }

    key->magic      = UCT_CUDA_MGI_RKEY_MAGIC;
    key->version    = UCT_CUDA_MGI_RKEY_VERSION;
    key->pid        = getpid();
    key->proc_start = uct_cuda_mgi_ipc_own_start();
    key->system_id  = ucs_get_system_id();
    key->base       = base;
    key->length     = length;
    key->buffer_id  = buffer_id;

    if (legacy_capable) {
        cu_err = cuIpcGetMemHandle(&key->handle.legacy, base);
        if (cu_err != CUDA_SUCCESS) {
            ucs_log(level, "cuda_mgi: cuIpcGetMemHandle of GPU memory at %p "
                    "failed: %s", address, uct_cuda_mgi_cu_error(cu_err));
            return UCS_ERR_IO_ERROR;
        }
        key->handle_type = UCT_CUDA_MGI_HANDLE_LEGACY;
        return UCS_OK;
    }

#if UCT_CUDA_MGI_HAVE_CUDA_FABRIC
    if (allowed & CU_MEM_HANDLE_TYPE_FABRIC) {
        cu_err = uct_cuda_mgi_ipc_export_vmm(address,
                                             CU_MEM_HANDLE_TYPE_FABRIC,
                                             key->handle.fabric);
        if (cu_err == CUDA_SUCCESS) {
            key->handle_type = UCT_CUDA_MGI_HANDLE_FABRIC;
            return UCS_OK;
        }
        /* fabric handles need the fabric (and IMEX) services: try the
         * file descriptor next */
        ucs_debug("cuda_mgi: no fabric handle for GPU memory at %p: %s",
                  address, uct_cuda_mgi_cu_error(cu_err));
    }
#endif

#if UCT_CUDA_MGI_HAVE_PIDFD
    if (allowed & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        int fd = -1;

        cu_err = uct_cuda_mgi_ipc_export_vmm(
                address, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, &fd);
        if (cu_err == CUDA_SUCCESS) {
            key->handle_type = UCT_CUDA_MGI_HANDLE_POSIX_FD;
            key->handle.fd   = fd;
            memh->fd         = fd;
            return UCS_OK;
        }
        ucs_debug("cuda_mgi: no file descriptor for GPU memory at %p: %s",
                  address, uct_cuda_mgi_cu_error(cu_err));
    }
#endif

    /* registered, but no other process can map it: its key is unreachable
     * and UCX moves it with another transport */
    ucs_debug("cuda_mgi: GPU memory at %p (allocation 0x%llx, %zu bytes) has "
              "no handle another process can open (not cudaMalloc memory, "
              "and its handle types 0x%llx allow neither a file descriptor "
              "nor a fabric handle)", address, (unsigned long long)base,
              length, (unsigned long long)allowed);
    key->handle_type = UCT_CUDA_MGI_HANDLE_NONE;
    return UCS_OK;
}


void uct_cuda_mgi_ipc_export_release(uct_cuda_mgi_memh_t *memh)
{
    if (memh->fd >= 0) {
        close(memh->fd);
        memh->fd = -1;
    }
}


ucs_status_t uct_cuda_mgi_ipc_check_key(const void *packed)
{
    const uct_cuda_mgi_rkey_t *key = packed;

    if (key->magic != UCT_CUDA_MGI_RKEY_MAGIC) {
        ucs_error("cuda_mgi: a remote key that is not cuda_mgi's (magic "
                  "0x%x, expected 0x%x)", key->magic,
                  UCT_CUDA_MGI_RKEY_MAGIC);
        return UCS_ERR_INVALID_PARAM;
    }
    if (key->version != UCT_CUDA_MGI_RKEY_VERSION) {
        ucs_error("cuda_mgi: remote key of format %u from pid %d, this build "
                  "reads format %u: every process of a job needs the same "
                  "cuda_mgi", key->version, key->pid,
                  UCT_CUDA_MGI_RKEY_VERSION);
        return UCS_ERR_INVALID_PARAM;
    }
    if (key->handle_type >= UCT_CUDA_MGI_HANDLE_LAST) {
        ucs_error("cuda_mgi: remote key from pid %d has handle type %u, "
                  "which this build does not know", key->pid,
                  key->handle_type);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}


/* ---- import -------------------------------------------------------------- */

#if UCT_CUDA_MGI_HAVE_PIDFD
/* The exporter's descriptor, duplicated into this process */
static ucs_status_t uct_cuda_mgi_ipc_take_fd(const uct_cuda_mgi_rkey_t *key,
                                             int *fd_p)
{
    char scope[16] = "?";
    int pidfd, fd, err;
    FILE *f;

    pidfd = (int)syscall(SYS_pidfd_open, (pid_t)key->pid, 0);
    if (pidfd < 0) {
        ucs_error("cuda_mgi: pidfd_open(%d) failed: %m (the process that "
                  "exported the memory has ended?)", key->pid);
        return UCS_ERR_UNREACHABLE;
    }

    fd  = (int)syscall(SYS_pidfd_getfd, pidfd, key->handle.fd, 0);
    err = errno;
    close(pidfd);
    if (fd >= 0) {
        *fd_p = fd;
        return UCS_OK;
    }

    f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f != NULL) {
        if (fgets(scope, sizeof(scope), f) == NULL) {
            strcpy(scope, "?");
        }
        scope[strcspn(scope, "\n")] = '\0';
        fclose(f);
    }
    ucs_error("cuda_mgi: cannot take the file descriptor of GPU memory from "
              "pid %d (pidfd_getfd: %s); the same permission as ptrace is "
              "needed: both processes of one user, and "
              "kernel.yama.ptrace_scope (now %s) 0, or allocate the memory "
              "with cudaMalloc", key->pid, strerror(err), scope);
    return UCS_ERR_UNREACHABLE;
}
#endif


/* Map a VMM handle's allocation into a new range of this process, with
 * access for device */
static ucs_status_t uct_cuda_mgi_ipc_map_vmm(const uct_cuda_mgi_rkey_t *key,
                                             CUdevice device,
                                             CUdeviceptr *ptr_p)
{
    CUmemGenericAllocationHandle handle;
    CUmemAccessDesc access;
    CUdeviceptr ptr     = 0;
    const char *what    = "import";
    ucs_status_t status = UCS_OK;
    CUresult cu_err     = CUDA_ERROR_NOT_SUPPORTED;
    void *shareable     = NULL;
    int fd              = -1;

    if (key->handle_type == UCT_CUDA_MGI_HANDLE_POSIX_FD) {
#if UCT_CUDA_MGI_HAVE_PIDFD
        status = uct_cuda_mgi_ipc_take_fd(key, &fd);
        if (status != UCS_OK) {
            return status;
        }
        shareable = (void*)(uintptr_t)fd;
        cu_err    = cuMemImportFromShareableHandle(
                &handle, shareable, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        close(fd);
#endif
    } else {
#if UCT_CUDA_MGI_HAVE_CUDA_FABRIC
        shareable = (void*)key->handle.fabric;
        cu_err    = cuMemImportFromShareableHandle(&handle, shareable,
                                                   CU_MEM_HANDLE_TYPE_FABRIC);
#endif
    }
    if (cu_err != CUDA_SUCCESS) {
        goto err;
    }

    what   = "cuMemAddressReserve";
    cu_err = cuMemAddressReserve(&ptr, key->length, 0, 0, 0);
    if (cu_err != CUDA_SUCCESS) {
        goto err_release;
    }

    what   = "cuMemMap";
    cu_err = cuMemMap(ptr, key->length, 0, handle, 0);
    if (cu_err != CUDA_SUCCESS) {
        goto err_free_range;
    }

    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id   = device;
    access.flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    what                 = "cuMemSetAccess";
    cu_err               = cuMemSetAccess(ptr, key->length, &access, 1);
    if (cu_err != CUDA_SUCCESS) {
        goto err_unmap;
    }

    /* the mapping holds the memory from now on */
    cuMemRelease(handle);
    *ptr_p = ptr;
    return UCS_OK;

err_unmap:
    cuMemUnmap(ptr, key->length);
err_free_range:
    cuMemAddressFree(ptr, key->length);
err_release:
    cuMemRelease(handle);
err:
    ucs_error("cuda_mgi: cannot map %s handle of %zu bytes of GPU memory of "
              "pid %d: %s: %s", uct_cuda_mgi_handle_type_name(key->handle_type),
              (size_t)key->length, key->pid, what,
              uct_cuda_mgi_cu_error(cu_err));
    return UCS_ERR_UNREACHABLE;
}


/* Called with ctx current */
static ucs_status_t uct_cuda_mgi_ipc_open(const uct_cuda_mgi_rkey_t *key,
                                          CUdevice device, CUdeviceptr *ptr_p)
{
    CUresult cu_err;

    switch (key->handle_type) {
    case UCT_CUDA_MGI_HANDLE_LEGACY:
        cu_err = cuIpcOpenMemHandle(ptr_p, key->handle.legacy,
                                    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        if (cu_err != CUDA_SUCCESS) {
            /* the caller may still reach the memory another way: UCP asks
             * at rkey unpack, so this is not an error yet */
            ucs_debug("cuda_mgi: cuIpcOpenMemHandle of GPU memory of pid %d "
                      "(0x%llx, %zu bytes) on CUDA device %d failed: %s",
                      key->pid, (unsigned long long)key->base,
                      (size_t)key->length, (int)device,
                      uct_cuda_mgi_cu_error(cu_err));
            return UCS_ERR_UNREACHABLE;
        }
        return UCS_OK;
    case UCT_CUDA_MGI_HANDLE_POSIX_FD:
    case UCT_CUDA_MGI_HANDLE_FABRIC:
        return uct_cuda_mgi_ipc_map_vmm(key, device, ptr_p);
    default:
        return UCS_ERR_UNREACHABLE;
    }
}


/* Called with the mapping's context current, or any for VMM */
static void uct_cuda_mgi_ipc_close(uct_cuda_mgi_mapping_t *map)
{
    CUresult cu_err;

    if (map->own) {
        return;
    } else if (map->handle_type == UCT_CUDA_MGI_HANDLE_LEGACY) {
        cu_err = cuIpcCloseMemHandle(map->ptr);
    } else {
        cu_err = cuMemUnmap(map->ptr, map->length);
        if (cu_err == CUDA_SUCCESS) {
            cu_err = cuMemAddressFree(map->ptr, map->length);
        }
    }
    if (cu_err != CUDA_SUCCESS) {
        ucs_debug("cuda_mgi: closing the mapping of GPU memory of pid %d "
                  "(0x%llx): %s", map->pid, (unsigned long long)map->base,
                  uct_cuda_mgi_cu_error(cu_err));
    }
}


/* Close map in its own context; called with the lock held */
static void uct_cuda_mgi_ipc_destroy(uct_cuda_mgi_mapping_t *map)
{
    CUcontext cur = NULL, ctx;
    int pushed    = 0;

    if ((map->ctx != NULL) && (cuCtxGetCurrent(&cur) == CUDA_SUCCESS) &&
        (cur != map->ctx)) {
        pushed = (cuCtxPushCurrent(map->ctx) == CUDA_SUCCESS);
    }
    uct_cuda_mgi_ipc_close(map);
    if (pushed) {
        cuCtxPopCurrent(&ctx);
    }
    ucs_free(map);
}


/* Drop one reference; with or without the lock.  The last one is dropped
 * only after the entry left the cache (marked stale there, under the lock,
 * before the cache's reference went) */
static void uct_cuda_mgi_ipc_put(uct_cuda_mgi_mapping_t *map)
{
    if (__atomic_sub_fetch(&map->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
        ucs_assert(map->stale);
        uct_cuda_mgi_ipc_destroy(map);
    }
}


static void uct_cuda_mgi_ipc_get(uct_cuda_mgi_mapping_t *map)
{
    __atomic_add_fetch(&map->refcount, 1, __ATOMIC_RELAXED);
}


/* Take map out of the cache: it no longer names live memory, or its peer is
 * forgotten; called with the lock held */
static void uct_cuda_mgi_ipc_evict(khiter_t iter)
{
    uct_cuda_mgi_mapping_t *map = kh_val(&uct_cuda_mgi_ipc.hash, iter);

    kh_del(uct_cuda_mgi_map, &uct_cuda_mgi_ipc.hash, iter);
    map->stale = 1;
    uct_cuda_mgi_ipc_put(map);  /* the cache's reference */
}


/* The cached mapping of mkey if it is key's, with a reference taken;
 * called with the lock held */
static uct_cuda_mgi_mapping_t *
uct_cuda_mgi_ipc_lookup(uct_cuda_mgi_map_key_t mkey,
                        const uct_cuda_mgi_rkey_t *key)
{
    khiter_t iter = kh_get(uct_cuda_mgi_map, &uct_cuda_mgi_ipc.hash, mkey);
    uct_cuda_mgi_mapping_t *map;

    if (iter == kh_end(&uct_cuda_mgi_ipc.hash)) {
        return NULL;
    }
    map = kh_val(&uct_cuda_mgi_ipc.hash, iter);
    if ((map->length != key->length) || (map->buffer_id != key->buffer_id)) {
        uct_cuda_mgi_ipc_evict(iter);
        return NULL;
    }
    uct_cuda_mgi_ipc_get(map);
    return map;
}


/* Evict the entries that overlap key's allocation but are not it (see the
 * rules above); called with the lock held */
static void uct_cuda_mgi_ipc_evict_overlaps(const uct_cuda_mgi_rkey_t *key,
                                            CUcontext ctx)
{
    khash_t(uct_cuda_mgi_map) *hash = &uct_cuda_mgi_ipc.hash;
    uct_cuda_mgi_mapping_t *map;
    khiter_t iter;

    for (iter = kh_begin(hash); iter != kh_end(hash); ++iter) {
        if (!kh_exist(hash, iter)) {
            continue;
        }
        map = kh_val(hash, iter);
        if ((map->ctx != ctx) || (map->pid != key->pid) ||
            (map->proc_start != key->proc_start) ||
            (map->base >= key->base + key->length) ||
            (key->base >= map->base + map->length)) {
            continue;
        }
        if ((map->base == key->base) && (map->length == key->length) &&
            (map->buffer_id == key->buffer_id)) {
            continue;
        }
        ucs_debug("cuda_mgi: mapping of pid %d memory 0x%llx..0x%llx (buffer "
                  "%llu) is stale: that memory was freed", map->pid,
                  (unsigned long long)map->base,
                  (unsigned long long)(map->base + map->length),
                  (unsigned long long)map->buffer_id);
        uct_cuda_mgi_ipc_evict(iter);
    }
}


/* A VMM mapping used from a device it has no access for yet */
static ucs_status_t uct_cuda_mgi_ipc_vmm_access(uct_cuda_mgi_mapping_t *map,
                                                CUdevice device)
{
    CUmemAccessDesc access;
    CUresult cu_err;

    if ((device >= 64) || (map->access_mask & UCS_BIT(device))) {
        return UCS_OK;
    }

    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id   = device;
    access.flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cu_err = cuMemSetAccess(map->ptr, map->length, &access, 1);
    if (cu_err != CUDA_SUCCESS) {
        ucs_error("cuda_mgi: cannot give CUDA device %d access to GPU memory "
                  "of pid %d: cuMemSetAccess: %s", (int)device, map->pid,
                  uct_cuda_mgi_cu_error(cu_err));
        return UCS_ERR_IO_ERROR;
    }
    map->access_mask |= UCS_BIT(device);
    return UCS_OK;
}


ucs_status_t uct_cuda_mgi_ipc_map(const uct_cuda_mgi_rkey_t *key,
                                  CUcontext ctx,
                                  uct_cuda_mgi_mapping_t **map_p)
{
    int is_own = uct_cuda_mgi_ipc_key_is_own(key);
    int is_vmm = !is_own &&
                 ((key->handle_type == UCT_CUDA_MGI_HANDLE_POSIX_FD) ||
                  (key->handle_type == UCT_CUDA_MGI_HANDLE_FABRIC));
    uct_cuda_mgi_mapping_t *map = NULL;
    CUcontext cur = NULL, popped;
    uct_cuda_mgi_map_key_t mkey;
    ucs_status_t status;
    CUdevice device;
    CUdeviceptr ptr;
    khiter_t iter;
    int pushed = 0, ret;

    if (key->handle_type == UCT_CUDA_MGI_HANDLE_NONE) {
        return UCS_ERR_UNREACHABLE;
    }

    mkey.ctx        = (is_vmm || is_own) ? NULL : ctx;
    mkey.pid        = key->pid;
    mkey.proc_start = key->proc_start;
    mkey.base       = key->base;

    if (!is_vmm) {
        /* the common case, a hit, needs neither the device nor ctx */
        pthread_mutex_lock(&uct_cuda_mgi_ipc.lock);
        uct_cuda_mgi_ipc_init();
        map = uct_cuda_mgi_ipc_lookup(mkey, key);
        pthread_mutex_unlock(&uct_cuda_mgi_ipc.lock);
        if (map != NULL) {
            *map_p = map;
            return UCS_OK;
        }
    }

    if ((cuCtxGetCurrent(&cur) == CUDA_SUCCESS) && (cur != ctx)) {
        if (cuCtxPushCurrent(ctx) != CUDA_SUCCESS) {
            ucs_error("cuda_mgi: cannot make CUDA context %p current to map "
                      "memory of pid %d", ctx, key->pid);
            return UCS_ERR_IO_ERROR;
        }
        pushed = 1;
    }
    if (cuCtxGetDevice(&device) != CUDA_SUCCESS) {
        status = UCS_ERR_IO_ERROR;
        goto out_pop;
    }

    pthread_mutex_lock(&uct_cuda_mgi_ipc.lock);
    uct_cuda_mgi_ipc_init();
    map = uct_cuda_mgi_ipc_lookup(mkey, key);
    if (map == NULL) {
        uct_cuda_mgi_ipc_evict_overlaps(key, mkey.ctx);
        if (is_own) {
            ptr = key->base;
        } else {
            status = uct_cuda_mgi_ipc_open(key, device, &ptr);
            if (status != UCS_OK) {
                goto out_unlock;
            }
        }

        map = ucs_calloc(1, sizeof(*map), "uct_cuda_mgi_mapping");
        if (map == NULL) {
            ucs_error("cuda_mgi: no memory for a mapping of pid %d",
                      key->pid);
            status = UCS_ERR_NO_MEMORY;
            goto out_unlock;
        }
        map->ptr         = ptr;
        map->ctx         = mkey.ctx;
        map->pid         = key->pid;
        map->proc_start  = key->proc_start;
        map->base        = key->base;
        map->length      = key->length;
        map->buffer_id   = key->buffer_id;
        map->handle_type = key->handle_type;
        map->own         = is_own;
        map->access_mask = (is_vmm && (device < 64)) ? UCS_BIT(device) : 0;
        map->refcount    = 1;    /* the cache's */
        iter = kh_put(uct_cuda_mgi_map, &uct_cuda_mgi_ipc.hash, mkey, &ret);
        if (ret < 0) {
            ucs_error("cuda_mgi: no memory for the mapping cache");
            uct_cuda_mgi_ipc_close(map);
            ucs_free(map);
            status = UCS_ERR_NO_MEMORY;
            goto out_unlock;
        }
        kh_val(&uct_cuda_mgi_ipc.hash, iter) = map;
        uct_cuda_mgi_ipc_get(map);
        ucs_debug("cuda_mgi: mapped %s handle of pid %d GPU memory 0x%llx "
                  "(%zu bytes) at 0x%llx on CUDA device %d",
                  uct_cuda_mgi_handle_type_name(key->handle_type), key->pid,
                  (unsigned long long)key->base, (size_t)key->length,
                  (unsigned long long)ptr, (int)device);
    } else if (is_vmm) {
        status = uct_cuda_mgi_ipc_vmm_access(map, device);
        if (status != UCS_OK) {
            uct_cuda_mgi_ipc_put(map);
            goto out_unlock;
        }
    }

    *map_p = map;
    status = UCS_OK;

out_unlock:
    pthread_mutex_unlock(&uct_cuda_mgi_ipc.lock);
out_pop:
    if (pushed) {
        cuCtxPopCurrent(&popped);
    }
    return status;
}


/* Another reference to a mapping the caller holds one of */
void uct_cuda_mgi_ipc_map_ref(uct_cuda_mgi_mapping_t *map)
{
    uct_cuda_mgi_ipc_get(map);
}


void uct_cuda_mgi_ipc_unmap(uct_cuda_mgi_mapping_t *map)
{
    uct_cuda_mgi_ipc_put(map);
}


void uct_cuda_mgi_ipc_forget_peer(pid_t pid)
{
    khash_t(uct_cuda_mgi_map) *hash = &uct_cuda_mgi_ipc.hash;
    uct_cuda_mgi_mapping_t *map;
    khiter_t iter;

    pthread_mutex_lock(&uct_cuda_mgi_ipc.lock);
    uct_cuda_mgi_ipc_init();
    for (iter = kh_begin(hash); iter != kh_end(hash); ++iter) {
        if (!kh_exist(hash, iter)) {
            continue;
        }
        map = kh_val(hash, iter);
        if ((map->pid == pid) &&
            (__atomic_load_n(&map->refcount, __ATOMIC_ACQUIRE) == 1)) {
            uct_cuda_mgi_ipc_evict(iter);
        }
    }
    pthread_mutex_unlock(&uct_cuda_mgi_ipc.lock);
}
