//===- Buffers.h - Virtual device pointers and replica validity -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). One allocation of the virtual device
// (cudaMalloc) is a Buffer:
//
// * The virtual device pointer IS the address of the buffer's host copy. It
//   is a real host address, so p + k arithmetic, pointers inside
//   allocations, cudaMemcpyDefault and the CPU variant all work on it as is;
//   a GPU replica's address is found at launch by translating
//   (buffer, offset) (addressOn). The interval map (std::map keyed by start)
//   resolves any pointer inside an allocation to (buffer, offset).
// * Each buffer has a host copy and a replica per device, allocated when a
//   device first needs it; a device that shares host memory (the first CPU
//   device) uses the host copy as its replica. Validity is a RangeSet per
//   location: the bytes whose current contents that location holds. Every
//   byte is valid in at least one location (a fresh buffer's undefined
//   contents count as valid everywhere, so nothing moves before first use).
// * A device about to read a range asks what it is missing; the transfer
//   planner picks, for each missing piece, a location that holds it: a peer
//   GPU with a direct link first, then the host copy, then any device that
//   can copy directly, and as a last resort stages through the host copy
//   (which then becomes valid too). A device that wrote a range marks it
//   written: valid there, stale everywhere else. A host read pulls only the
//   stale ranges.
//
// All data movement goes through the Device interface, so tests run it with
// fake devices. Every operation here is synchronous (complete on return);
// stream-ordered versions come with launches.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_BUFFERS_H
#define CLEAVE_RT_BUFFERS_H

#include "cleave/rt/Device.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/RangeSet.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// Where bytes live: HostLocation, or the index of a device in the
/// BufferManager's device list.
using Location = int;
constexpr Location HostLocation = -1;

/// One copy of the transfer plan: Bytes bytes at Offset of the buffer, from
/// Src's copy to Dst's.
struct Transfer {
  Location Src = HostLocation;
  Location Dst = HostLocation;
  uint64_t Offset = 0;
  uint64_t Bytes = 0;
  bool operator==(const Transfer &O) const {
    return Src == O.Src && Dst == O.Dst && Offset == O.Offset &&
           Bytes == O.Bytes;
  }
};

/// cudaMemcpyKind's values.
enum class MemcpyKind : int {
  HostToHost = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  Default = 4,
};

class BufferManager;
struct ManagedRegion;

class Buffer {
public:
  /// The virtual device pointer (= the host copy).
  void *base() const { return Host; }
  uint64_t size() const { return Size; }
  /// Allocation number, 1, 2, ... in order of allocation.
  uint64_t id() const { return Id; }

  /// The bytes \p L holds (a host-sharing device answers for the host).
  RangeSet validRanges(Location L) const;
  /// Whether \p L holds every byte of \p R (without copying the set).
  bool holds(Location L, ByteRange R) const;
  /// Whether \p L holds every byte and no other location holds any: what
  /// a kernel on \p L reads is there, and what it writes makes no other
  /// copy stale.
  bool heldOnlyBy(Location L) const;
  /// Bytes of \p R that a copy to the device (cudaMemcpy host to device,
  /// cudaMemset) left in the host copy and no device has fetched or
  /// overwritten since: in CUDA they would already be on a device.
  uint64_t stagedBytes(ByteRange R) const;
  /// Bytes of \p R that a kernel wrote on a device and the host then read
  /// back (a cudaMemcpy to the host), at the last write or since: the
  /// model policy expects the next launch's results there to go back too.
  uint64_t readBackBytes(ByteRange R) const;
  /// Bytes of \p R that a direct host copy (BufferManager::memcpy) sent
  /// straight to a device and no launch has read since: like stagedBytes(),
  /// an upload the program may repeat before every launch.
  uint64_t pushedBytes(ByteRange R) const;
  /// Bytes of \p R that the last launch to read the buffer read on
  /// \p L's memory (a host-sharing device's: the host copy's). A launch
  /// that writes them elsewhere hands them to that reader, if it runs
  /// again as it ran: the model policy charges the producer for the copy
  /// (docs/partitioner.md, "Results the next launch reads elsewhere").
  uint64_t lastReadBytes(ByteRange R, Location L) const;
  /// Whether \p L has replica memory (always for the host and host-sharing
  /// devices).
  bool hasReplica(Location L) const;
  /// How many of the program's cudaMemcpy and cudaMemset calls wrote into
  /// the buffer, and how many cudaMemcpy calls read out of it, so far: the
  /// model policy spreads the program's copies over the launches between
  /// them.
  uint64_t programWrites() const;
  uint64_t programReads() const;

  /// Everything tracked about the buffer's bytes: what each location holds,
  /// what the program and the last launch did with them, the replicas and
  /// the host copy's pinning. From equal states, the same launch plans,
  /// moves and marks the same (the engine's replayed launches,
  /// docs/runtime.md, "Repeated launches").
  struct State {
    std::vector<RangeSet> Valid, LastReads;
    RangeSet Staged, ReadBack, FetchedSinceWrite, Pushed, HostReads;
    std::vector<DeviceAddr> Replica;
    uint64_t HostLinkBytes = 0, ProgramWrites = 0, ProgramReads = 0;
    bool PinTried = false;
    Location PinnedBy = -1;
    bool operator==(const State &O) const;
  };
  State state() const;
  /// Whether the buffer is in state \p S (without copying its own).
  bool inState(const State &S) const;

private:
  friend class BufferManager;
  /// The fields of State in \p X and \p Y (a State or a Buffer) are equal.
  template <class X, class Y> static bool sameFields(const X &A, const Y &B);
  Buffer(BufferManager &M, char *Host, uint64_t Size, uint64_t Id,
         size_t NumDevices);

  BufferManager &Mgr;
  char *Host;
  uint64_t Size;
  uint64_t Id;
  mutable std::mutex Mutex;
  /// [0] the host copy, [1 + d] device d's replica.
  std::vector<RangeSet> Valid;
  /// See stagedBytes().
  RangeSet Staged;
  /// See readBackBytes(); FetchedSinceWrite: bytes a host read fetched
  /// from a device since a device last wrote them.
  RangeSet ReadBack, FetchedSinceWrite;
  /// See pushedBytes().
  RangeSet Pushed;
  /// Results a pipelined launch sent back to the host copy before the
  /// program asked (BufferManager::landTransfers) and that the program has
  /// not read since: a host read of them counts as a read-back, as if it
  /// had fetched them from the device.
  RangeSet Received;
  /// Bytes that ranges on host-sharing devices (the CPU) read in the last
  /// launch that used the buffer: a direct host copy leaves them in the
  /// host copy rather than pushing them to a GPU that also holds them.
  RangeSet HostReads;
  /// See lastReadBytes(); per validity location, as Valid.
  std::vector<RangeSet> LastReads;
  std::vector<DeviceAddr> Replica;
  bool Freed = false;
  /// The host copy lies between guard regions (GuardedMemory.h).
  bool Guarded = false;
  /// Managed memory (cudaMallocManaged): its host copy's pages, whose host
  /// writes are tracked (ManagedPages.h); null for other buffers.
  ManagedRegion *Region = nullptr;
  /// Bytes copied between the host copy and devices (HostPinning::Reused);
  /// whether pinning was tried; the device that pinned it (-1: none).
  uint64_t HostLinkBytes = 0;
  /// See programWrites().
  uint64_t ProgramWrites = 0, ProgramReads = 0;
  bool PinTried = false;
  Location PinnedBy = -1;
};

/// When a buffer's host copy is page-locked (registered with a GPU's
/// driver, so its copies go by DMA at the link's speed instead of through
/// the device's staging buffers). CLEAVE_TUNE=pin_host=off|reused|always.
enum class HostPinning {
  Off,
  /// Once the buffer moved more bytes over host links than its size: it
  /// went to or came from a GPU and is going again. Pinning a large range
  /// costs about as much as one staged copy of it, so a buffer that
  /// crosses once is not pinned.
  Reused,
  /// At its first copy to or from a GPU.
  Always,
};

class BufferManager {
public:
  /// Buffers over \p Devices (not owned; they outlive the manager).
  explicit BufferManager(std::vector<Device *> Devices);
  /// Frees every buffer still allocated.
  ~BufferManager();
  BufferManager(const BufferManager &) = delete;
  BufferManager &operator=(const BufferManager &) = delete;

  size_t numDevices() const { return Devices.size(); }
  Device &device(Location L) const { return *Devices[L]; }

  /// Host copies of at least PinMinBytes are page-locked as \p P says
  /// (default: Reused; the runtime sets CLEAVE_TUNE's pin_host). Smaller
  /// ones go through the GPUs' staging buffers, which copy them just as
  /// fast.
  void setHostPinning(HostPinning P) { Pinning = P; }
  HostPinning hostPinning() const { return Pinning; }
  static constexpr uint64_t PinMinBytes = 4u << 20;
  /// Buffers whose host copy is page-locked now.
  size_t pinnedBuffers() const;
  /// Whether a cudaMemcpy of at least \p MinBytes between the program's host
  /// memory and a buffer moves the bytes that live on devices straight
  /// between that memory and the devices (default: on, 4 MiB; the runtime
  /// sets CLEAVE_TUNE's host_copies=direct|shadow), instead of through the
  /// buffer's host copy. See memcpy().
  void setDirectHostCopies(bool On, uint64_t MinBytes = DirectCopyMinBytes) {
    DirectCopies = On;
    DirectMinBytes = MinBytes;
  }
  bool directHostCopies() const { return DirectCopies; }
  static constexpr uint64_t DirectCopyMinBytes = 4u << 20;
  /// The device to which the program's cudaMemcpy and cudaMemset write
  /// whatever they write, as CUDA does (default -1: none). A launch on it
  /// then finds its inputs there, as under nvcc, instead of moving them in
  /// from the host copy launch after launch. With no home device, the
  /// bytes wait in the host copy (or go where they live), and the launch
  /// that needs them moves them: the policy for several GPUs, whose split
  /// is not known at the copy.
  void setHomeDevice(Location L) { Home = L; }
  Location homeDevice() const { return Home; }
  /// The only device with memory of its own (one GPU, with or without CPU
  /// devices), the runtime's home device; -1 when there are none or
  /// several.
  Location soleDeviceWithOwnMemory() const;
  /// The location whose validity \p L uses: HostLocation for devices that
  /// share host memory, else \p L.
  Location validityLocation(Location L) const;

  // Allocation and pointers. ----------------------------------------------
  /// A new buffer of \p Bytes bytes, 256-byte aligned; Bytes == 0 gives a
  /// null pointer, as cudaMalloc does. With a CPU device among the devices
  /// the host copy is mapped between guard regions (GuardedMemory.h: a CPU
  /// kernel's overrun faults). Host copies of 1 MiB or more are mapped with
  /// MAP_NORESERVE, so their pages cost host memory only once the host
  /// touches them (a buffer living on a GPU costs none).
  Result allocate(uint64_t Bytes, void *&Ptr);
  /// Frees the buffer \p Ptr starts. InvalidValue for a pointer inside an
  /// allocation, a double free, or a pointer never allocated. Null: no-op.
  Result free(void *Ptr);

  struct Resolved {
    std::shared_ptr<Buffer> Buf;
    uint64_t Offset = 0;
  };
  /// The buffer holding \p P (start <= P < start + size) and P's offset.
  Result resolve(const void *P, Resolved &Out) const;
  /// resolve(), checking that [P, P + Bytes) lies inside the buffer.
  Result resolveRange(const void *P, uint64_t Bytes, Resolved &Out) const;
  bool isDevicePointer(const void *P) const;
  size_t numBuffers() const;

  // Managed memory (docs/runtime.md, "Managed memory"). -------------------
  /// cudaMallocManaged: allocate(), and the program may read and write the
  /// host copy itself whenever no work is outstanding. Its pages are
  /// write-protected then, so the host's writes are recorded page by page
  /// (ManagedPages.h). Always between guard regions, never from the heap
  /// (its pages are its own); never held by the home device alone (the
  /// host may read it at once). MemoryAllocation when the memory or the
  /// table of managed regions is exhausted.
  Result allocateManaged(uint64_t Bytes, void *&Ptr);
  /// Whether \p P points into a managed buffer.
  bool isManaged(const void *P) const;
  /// Whether managed buffers exist (one atomic load).
  bool hasManaged() const {
    return ManagedCount.load(std::memory_order_acquire) != 0;
  }
  /// Work that may use the buffers is about to start (a launch, a copy, a
  /// fill, a prefetch): the pages the host wrote since it gained access
  /// become written at the host (every other copy of them stale), and the
  /// runtime's own writes to the host copies no longer count as the host's
  /// (ManagedPages.h, the devices' phase). Until the next managedToHost()
  /// the program must not touch managed memory, as CUDA requires on
  /// devices without concurrent managed access.
  Result managedToDevices();
  /// A synchronization with no work outstanding: every managed buffer is
  /// made current in its host copy (only stale ranges move) and the pages
  /// opened since the last one write-protected again, so that the host
  /// reads every result and its writes are recorded.
  Result managedToHost();

  // Validity and transfers. -----------------------------------------------
  /// The parts of \p R that \p L does not hold.
  RangeSet missingRanges(const Buffer &B, Location L, ByteRange R) const;
  /// A launch used \p B: its ranges read \p Reads, each on its device
  /// (pushed bytes among them are no longer pending, Buffer::pushedBytes;
  /// where they were read is Buffer::lastReadBytes, replaced when they are
  /// not empty), those on host-sharing devices \p HostReads (Buffer's
  /// HostReads, replaced).
  void noteLaunchReads(
      Buffer &B,
      const std::vector<std::pair<Location, const RangeSet *>> &Reads,
      RangeSet HostReads);
  /// \p L wrote \p R: valid there, stale everywhere else.
  Result markWritten(Buffer &B, Location L, ByteRange R);
  /// \p L wrote every range of \p Rs (one lock; whole-set merges).
  Result markAllWritten(Buffer &B, Location L, const RangeSet &Rs);
  /// The copies that make \p R valid on \p Dst, in the order to run them.
  Result planTransfers(const Buffer &B, Location Dst, ByteRange R,
                       std::vector<Transfer> &Plan) const;
  /// Runs \p Plan; each copy that succeeds makes its range valid at its
  /// destination, so a failure midway leaves validity exact.
  Result executeTransfers(Buffer &B, const std::vector<Transfer> &Plan);
  /// executeTransfers() that holds the buffer's lock only to allocate
  /// replicas and to record validity, not during the copies: copies of one
  /// buffer to several devices can then run at once, from one thread per
  /// device (the engine's prepare phase). The caller sees that nothing
  /// writes the copies' sources meanwhile and that no two threads copy into
  /// the same location.
  /// With \p PullOn, a stream of the copies' destination (every copy of
  /// \p Plan goes from a GPU to that GPU over a peer link), the copies are
  /// only queued there (Device::pullFromPeer) and count as valid at once:
  /// the caller sees that nothing but work queued behind them on that
  /// stream reads them, and that nothing writes their sources, before the
  /// stream is synchronized.
  Result executeTransfersUnlocked(Buffer &B, const std::vector<Transfer> &Plan,
                                  StreamHandle PullOn = nullptr);
  /// Queues each copy of \p Plan, between the host copy and one GPU, on
  /// \p S, a stream of that GPU, and returns without waiting for them; the
  /// replica is allocated first. Nothing is marked valid: the caller calls
  /// landTransfers() for the copies once \p S completed them, and sees
  /// that nothing writes their sources, or reads or writes their
  /// destinations, before then (a pipelined launch, engine/Pipeline.cpp).
  Result queueTransfers(Buffer &B, const std::vector<Transfer> &Plan,
                        StreamHandle S);
  /// Marks each copy of \p Plan valid at its destination (queued by
  /// queueTransfers() and completed). Copies to the host copy are results
  /// sent back eagerly (Buffer::Received).
  void landTransfers(Buffer &B, const std::vector<Transfer> &Plan);
  /// Allocates \p L's replica if needed, then plans and runs the copies that
  /// make \p R valid there: what a device does before it reads \p R, and
  /// what a host read does (only stale ranges move).
  Result makeValid(Buffer &B, Location L, ByteRange R);
  /// \p L's address of byte \p Offset of \p B (allocating the replica).
  Result addressOn(Buffer &B, Location L, uint64_t Offset, DeviceAddr &Out);

  // Host-side operations under the CUDA-runtime subset (synchronous). -----
  /// cudaMemcpy: device pointers must be runtime pointers with the whole
  /// range inside their buffer; a host pointer that is a runtime pointer is
  /// treated as one (as with unified addressing).
  ///
  /// Direct host copies (setDirectHostCopies). A large copy from the
  /// program's memory into a buffer sends each byte that a device's replica
  /// held (where the last kernels ran, and so where the next ones will
  /// likely read it) to that device, one thread per device, and writes only
  /// the rest into the host copy: valid on those devices and stale in the
  /// host copy, where a smaller copy leaves it valid in the host copy only.
  /// Bytes that a CPU range read in the last launch stay in the host copy
  /// even where a device holds them. What went to a device is pushed
  /// (Buffer::pushedBytes) until a launch reads it.
  /// A device whose copy fails gets nothing; its bytes go to the host copy.
  /// A large copy out of a buffer takes the bytes that are stale in the
  /// host copy straight from the devices holding them (one thread per
  /// device), without making the host copy valid. Either way each byte
  /// crosses host memory once instead of twice.
  Result memcpy(void *Dst, const void *Src, uint64_t Bytes,
                MemcpyKind Kind = MemcpyKind::Default);
  /// cudaMemcpy2D: \p Height rows of \p Width bytes, \p DPitch and
  /// \p SPitch apart. Between the host and a buffer whose rows the home
  /// device holds (or, to the device, any buffer when there is a home
  /// device), one 2-D transfer with that device (Device::copy2D); otherwise
  /// one memcpy() per row.
  Result memcpy2D(void *Dst, uint64_t DPitch, const void *Src,
                  uint64_t SPitch, uint64_t Width, uint64_t Height,
                  MemcpyKind Kind = MemcpyKind::Default);
  /// cudaMemset on a runtime pointer.
  Result memset(void *Dst, int Value, uint64_t Bytes);
  /// The rate at which the program's memcpy() calls moved bytes into
  /// (\p In) or out of \p L's memory, GB/s (1e9 B/s), from copies of at
  /// least ProgramCopyRateBytes, each timed as it ran alongside whatever
  /// else that call copied: a faster copy sets it, a slower one lowers it
  /// by a quarter of the difference. 0 before any. HostLocation (and a
  /// host-sharing device): the host copy.
  double programCopyGBps(Location L, bool In) const;
  static constexpr uint64_t ProgramCopyRateBytes = uint64_t(1) << 20;
  /// Makes [P, P + Bytes) of a runtime pointer current in the host copy.
  Result syncToHost(const void *P, uint64_t Bytes);
  /// Every live buffer current in its host copy, and, after a kernel that
  /// may have written any of them through pointers the engine cannot see,
  /// written there (every other copy stale).
  Result syncAllToHost();
  void markAllWrittenOnHost();

  // Deferred completion (docs/runtime.md, "Deferred completion"). --------
  /// Bytes of a buffer that work left running on a GPU claims there (it
  /// writes them, or copies them in from a peer).
  struct DeferredClaim {
    std::shared_ptr<Buffer> B;
    RangeSet Bytes;
  };
  /// A launch returns while its work on \p Gpu's compute stream may still
  /// run: records the GPU's completion event behind that work. Should the
  /// work fail, settle() drops \p Claims from \p Gpu. \p PulledFrom: the
  /// GPUs whose memory that work reads (queued pulls). \p On: the stream
  /// of \p Gpu the work went to when it is not the compute stream (a
  /// program stream's own, docs/runtime-api.md "Direct launches"); its own
  /// completion event is recorded there. \p RecordLater (the compute
  /// stream only): the event is recorded when first needed rather than
  /// now, behind whatever the stream has by then; for the work of one GPU,
  /// whose later work may be waited for with it, not for GPUs whose
  /// launches wait for each other's.
  Result defer(Location Gpu, std::vector<DeferredClaim> Claims,
               const std::set<Location> &PulledFrom = {},
               StreamHandle On = nullptr, bool RecordLater = false);
  /// \p Out: the completion event of the work deferred on \p On, a stream
  /// of \p Gpu (null: its compute stream), when some is still pending
  /// there (not settled); null otherwise. A stream that must come after
  /// that work waits for the event (Device::waitForEvent). An error is the
  /// device's, recording the event.
  Result deferredTail(Location Gpu, StreamHandle On, EventHandle &Out);
  /// Whether no GPU other than \p Gpu has deferred work.
  bool deferredOnlyOn(Location Gpu);
  /// Whether some GPU has deferred work.
  bool hasDeferred() const {
    return DeferredGpus.load(std::memory_order_acquire) != 0;
  }
  /// Whether every GPU's deferred work is done, without waiting for it
  /// (cudaStreamQuery, cudaEventQuery). An error is the device's.
  Result queryDeferred(bool &Done);
  /// Orders \p Gpu's compute stream after the deferred work that what a
  /// launch queues there next may touch (waits queued on the device; the
  /// host does not wait): that of the GPUs in \p Sources, whose memory it
  /// will read, and that of the GPUs whose deferred pulls read \p Gpu's
  /// memory, which it may overwrite. A GPU's kernels touch only its own
  /// memory; copies other than queued pulls settle() first.
  Result orderAfterDeferred(Location Gpu, const std::set<Location> &Sources);
  /// Waits for every GPU's deferred work; called first by every operation
  /// here that copies, frees or reads device memory otherwise than by
  /// queuing behind that work. An error is the first failed GPU's: its
  /// claims are dropped (each byte stays valid only where another location
  /// holds it, as for a run that failed), and it is reported once.
  Result settle();

  /// A count of the changes to the buffers' state (validity, the staged,
  /// pushed and read-back sets, replicas, allocations), raised after each
  /// change: two equal readings mean that no buffer changed in between.
  /// markWritten(), markAllWritten() and noteLaunchReads() count only when
  /// they change something; every other operation that may change a
  /// buffer counts each time. The engine repeats a launch that changed
  /// nothing without planning it again (docs/runtime.md, "Repeated
  /// launches").
  uint64_t stateChanges() const {
    return Changes.load(std::memory_order_acquire);
  }

private:
  size_t slot(Location L) const {
    return static_cast<size_t>(validityLocation(L) + 1);
  }
  bool isLocation(Location L) const {
    return L == HostLocation ||
           (L >= 0 && static_cast<size_t>(L) < Devices.size());
  }
  Result checkRange(const Buffer &B, Location L, ByteRange R) const;
  /// Counts a change when it changes something (stateChanges()).
  void markWrittenLocked(Buffer &B, Location L, const RangeSet &Rs);
  void noteChange() { Changes.fetch_add(1, std::memory_order_acq_rel); }
  /// Counts a change when it goes out of scope, after the operation's.
  struct ChangeCounter {
    BufferManager &M;
    ~ChangeCounter() { M.noteChange(); }
  };
  Result transfersLocked(const Buffer &B, Location Dst, ByteRange R,
                    std::vector<Transfer> &Plan) const;
  Result executeLocked(Buffer &B, const std::vector<Transfer> &Plan);
  /// One copy of a plan, checked, with its replica allocated and its
  /// addresses (Skip: nothing to move).
  struct ReadyCopy {
    Transfer T;
    Location S = HostLocation, D = HostLocation;
    DeviceAddr SrcAddr = 0, DstAddr = 0;
    bool Skip = false;
  };
  Result readyLocked(Buffer &B, const Transfer &T, ReadyCopy &Out);
  /// Counts \p Bytes moved between \p B's host copy and \p Gpu and pins
  /// the host copy (through \p Gpu) when the pinning policy says so.
  void maybePinLocked(Buffer &B, Location Gpu, uint64_t Bytes);
  /// memcpy() from the program's memory \p Src into \p R of \p B, and
  /// from \p R into the program's memory \p Dst, with direct host copies.
  /// \p Home >= 0: all of R goes to that device (homeDevice()).
  Result writeFromHostLocked(Buffer &B, ByteRange R, const char *Src,
                             Location Home = -1);
  Result readToHostLocked(Buffer &B, ByteRange R, char *Dst);
  /// executeLocked() for copies to the host: from several devices at once
  /// (one thread per source device) when they are large.
  Result gatherLocked(Buffer &B, const std::vector<Transfer> &Plan);
  static constexpr uint64_t ConcurrentCopyBytes = uint64_t(4) << 20;
  /// Feeds programCopyGBps().
  void noteProgramCopy(Location L, bool In, uint64_t Bytes,
                       std::chrono::steady_clock::time_point Start);
  Result runCopy(Buffer &B, const ReadyCopy &C, StreamHandle PullOn = nullptr);
  void landLocked(Buffer &B, const ReadyCopy &C);
  Result ensureReplicaLocked(Buffer &B, Location L);
  Result makeValidLocked(Buffer &B, Location L, ByteRange R);
  DeviceAddr addressLocked(const Buffer &B, Location L, uint64_t Off) const;
  void releaseLocked(Buffer &B);
  /// allocate() and allocateManaged().
  Result allocateBuffer(uint64_t Bytes, bool IsManaged, void *&Ptr);
  /// The managed buffers, taken under the manager's lock.
  std::vector<std::shared_ptr<Buffer>> managedBuffers() const;

  std::vector<Device *> Devices;
  /// Host copies are guarded when a CPU device may run kernels on them.
  bool GuardHostCopies = false;
  /// A CPU device computes on the host copies; without one, a host copy
  /// only passes bytes between the program and the GPUs.
  bool HostCopyWorks = false;
  HostPinning Pinning = HostPinning::Reused;
  bool DirectCopies = true;
  uint64_t DirectMinBytes = DirectCopyMinBytes;
  Location Home = -1;
  /// Every live buffer, taken under the manager's lock.
  std::vector<std::shared_ptr<Buffer>> liveBuffers() const;
  /// The home device, with a replica of \p B there; -1 when there is none
  /// or it has no room for one.
  Location homeFor(Buffer &B);
  mutable std::mutex Mutex;
  /// Start address -> buffer, for every live allocation.
  std::map<uintptr_t, std::shared_ptr<Buffer>> Live;
  /// Start address -> buffer, for the live managed buffers (hasManaged()
  /// reads their count without the lock).
  std::map<uintptr_t, std::shared_ptr<Buffer>> Managed;
  std::atomic<size_t> ManagedCount{0};
  /// Some managed buffer may be write-protected or hold pages the host
  /// wrote (set by managedToHost() and each managed allocation, cleared by
  /// managedToDevices()): launches after the first since a synchronization
  /// look at no buffer.
  std::atomic<bool> ManagedHostAccess{false};
  /// Start -> end of recently freed allocations whose addresses were not
  /// reused, to name use after free and double free in messages.
  std::map<uintptr_t, uintptr_t> Freed;
  uint64_t NextId = 1;
  mutable std::mutex RateMutex;
  /// (validity location, into it) -> GB/s (programCopyGBps).
  std::map<std::pair<Location, bool>, double> ProgramCopyGBps;
  std::atomic<uint64_t> Changes{0};
  /// defer(), settle(): per device, its completion event and whether work
  /// is deferred behind it, with that work's claims.
  struct DeferredWork {
    EventHandle Done = nullptr;
    /// Work deferred on the compute stream (Done) or on any Tails stream.
    bool Pending = false;
    /// Work deferred on the compute stream itself; Done is recorded
    /// behind it at defer(), or, with RecordLater, only when something
    /// needs the event (doneEvent()): a settle() synchronizes the stream,
    /// and recording at every direct launch would cost each a driver call.
    bool ComputePending = false;
    bool DoneRecorded = false;
    /// Program streams with deferred work of their own (defer()'s On;
    /// the runtime keeps those streams until it ends).
    struct Tail {
      StreamHandle S = nullptr;
      EventHandle Done = nullptr;
      bool Pending = false;
    };
    std::vector<Tail> Tails;
    std::vector<DeferredClaim> Claims;
    /// GPUs with deferred pulls out of this GPU's memory that its stream
    /// is not yet ordered after.
    std::set<Location> Readers;
  };
  std::mutex DeferMutex;
  /// \p Gpu's Done event, recorded now behind its compute stream's work if
  /// it was not since the last defer() there (DeferMutex held).
  Result doneEvent(Location Gpu, EventHandle &Out);
  std::vector<DeferredWork> Deferred;
  std::atomic<unsigned> DeferredGpus{0};
};

} // namespace rt
} // namespace cleave

#endif
