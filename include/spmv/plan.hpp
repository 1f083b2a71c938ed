#pragma once
/// @file
/// One kernel interface, many implementations chosen at run time.
///
/// A Plan is made once per (matrix, kernel, options) and applied many times, like an FFTW plan or
/// cuSPARSE's preprocess: format conversion, partitioning and device upload happen when the plan is
/// made (and are timed there); run() does only the product. Every kernel is listed once in the
/// registry; the CLI, the tests and the benchmark enumerate it.
#include <spmv/device.hpp>
#include <spmv/formats/limits.hpp>
#include <spmv/matrix.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spmv {

namespace detail {
class ForwardingPlan;
}

const char* to_string(Backend b);
Backend parse_backend(std::string_view s);  ///< throws Unsupported on an unknown name

/// The kernels' own settings, each described once in spmv/params.hpp (what it means, its valid
/// values, which kernels take it, what the benchmark sweeps); a kernel ignores those it does not take.
struct KernelSettings {
  int block_size = 0;            ///< CUDA threads per block (a multiple of 32, 32..1024); 0: the kernel's own
  int hack = 32;                 ///< HLL rows per hack
  int subwarp = 0;               ///< CSR-vector threads per row; 0 = chosen from the matrix
  offset_t nz_per_chunk = 0;     ///< OpenMP dynamic chunk size in nonzeros; 0 = default
  index_t chunk_rows = 0;        ///< OpenMP dynamic chunk size in rows (over nz_per_chunk); 0 = from nonzeros
  index_t chunk_multiple = 0;    ///< 004's chunk: rows / threads (or chunk_rows) rounded down to a multiple of
                                 ///< this many rows, at least one, under a static schedule (0, 1: none)
  offset_t nz_per_block = 0;     ///< CSR-adaptive row-block size in nonzeros; 0 = default
  int csr5_omega = 0;            ///< CSR5 tile width; 0 = the backend's SIMD/warp width
  int csr5_sigma = 0;            ///< CSR5 tile height; 0 = chosen from nonzeros per row
  bool deterministic = true;     ///< kernels with atomics use their two-pass variant
  std::string variant = "auto";  ///< the kernel's variant words (KernelSpec::variants); "auto": chosen per matrix
};

struct PlanOptions {
  int threads = 0;                   ///< CPU backends (omp); 0 = every core OpenMP offers; never a global setting
  int k = 1;                         ///< right-hand sides: 1 = SpMV, > 1 = SpMM
  Layout layout = Layout::RowMajor;  ///< of X and Y when k > 1
  /// Arithmetic of the product. Single and mixed plans store the matrix's values in float (rounded
  /// once when the plan is made; a value beyond float's range is refused; a float matrix's,
  /// CsrView::val_f32, taken as they are); single ones also x and y.
  Precision precision = Precision::Double;
  /// A or A^T; a transposed plan's rows are A's columns. The baselines do A^T themselves as their
  /// libraries do (cuSPARSE's CUSPARSE_OPERATION_TRANSPOSE, Eigen's A.transpose(), with the lifetime
  /// rules of a plan of A), and so do the scatter kernels ("csr-scatter": A's rows added into y, no
  /// copy made); for every other kernel A^T is made once when the plan is made (a CSR of A^T,
  /// counted in convert_seconds and checked against the memory budget) and the plan keeps it. The
  /// planner ("auto") chooses between the two by the products expected and the memory budget.
  Operation operation = Operation::NoTranspose;
  /// Renumber a square matrix's rows and columns alike (P A P^T) once, when the plan is made, and
  /// multiply in that numbering: Reorder::Rcm (reverse Cuthill-McKee) brings the columns a row
  /// reads close together. x and y stay in A's numbering: each product gathers x through the
  /// permutation and scatters y back (two more passes over the vectors, three where beta != 0, on
  /// the device for device vectors). The plan holds its own copy of P A P^T (double values) and
  /// the permutation, so A may go once it is made. The renumbering's time counts in
  /// convert_seconds; its bandwidth before and after shows in detail. spmv/formats/reorder.hpp
  /// gives the permutation for a user who iterates in the new numbering. Rectangular matrices:
  /// Unsupported. Reorder::Auto (the default): the planner (kernel "auto") renumbers by RCM where
  /// its model predicts that the products expected (`products`) repay the renumbering and each
  /// product's two permutations (large square matrices whose columns lie far from their rows, with
  /// rows of a mesh's even lengths); detail says what it decided and why. A named kernel is not
  /// renumbered under Auto.
  Reorder reorder = Reorder::Auto;
  KernelSettings kernel = {};  ///< the kernel's own settings
  /// Refuse formats needing more than this many bytes (0 = the default: half of physical memory, at
  /// least 16 GiB) or more than max_ratio_to_csr times the CSR size (0 = the default: 20).
  double memory_budget_bytes = 0;
  double max_ratio_to_csr = 0;
  /// The planner (kernel "auto"): how many products the plan will serve, so that a format is
  /// chosen only if its conversion is repaid within them; and whether it may time its top
  /// candidates on the matrix (false: the model's first choice, deterministic).
  long long products = 100;
  bool trial = true;
};

/// The most threads the library's plans, conversions and reader ask for: twice the machine's hardware
/// threads, at least 256; requests above it are cut to it (libgomp crashes creating some 65,000
/// threads: their stacks pass the kernel's map count). Parallel regions that take OpenMP's default
/// team follow OMP_NUM_THREADS, which the CLI cuts to this too.
int max_threads();
/// `requested` threads, or OpenMP's default when it is 0, cut to 1..max_threads().
int resolve_threads(int requested);
/// Threads a CPU plan runs with: opt.threads, or every core OpenMP offers when it is 0 (at most
/// max_threads()).
int plan_threads(const PlanOptions& opt);
/// What a plan's conversion may use: its threads and memory limits.
ConvertOptions convert_options(const PlanOptions& opt);

/// A plan: a matrix prepared once for one kernel (format converted, rows partitioned, data on the
/// device), then multiplied as often as needed.
///
/// Lifetime: a plan of a CSR kernel on the CPU (serial, OpenMP, Eigen) borrows the arrays of the
/// matrix it was made from (a Csr's vectors, or whatever a CsrView points to): they must outlive
/// the plan and not change while it lives. Plans of ELL, HLL and CSR5 on the CPU hold their own
/// converted copy, and every CUDA plan its own device copy: the matrix may go once the plan is
/// made; so may it for a plan that made A^T (a row kernel's A^T x, a scatter kernel's A x), which
/// holds A^T. Plans made by "auto" follow the kernel they chose (Plan::chosen); keep the matrix alive
/// when in doubt. A plan is used by one thread at a time.
///
/// Products: multiply() on host vectors (std::span) works on every plan; a CUDA plan copies x to
/// the device and y back within the call (through pinned staging) and returns when y is there.
/// multiply() on device vectors (DeviceSpan: the user's device memory or a DeviceVector) is a CUDA
/// plan's product on them as they are: queued on the given stream, nothing copied, no host
/// synchronisation; y is ready when the stream's work is (device::synchronize, or an event of the
/// caller's). A plan's products on different streams run in the order they were called (the plan
/// makes each wait for the one before), and destroying a plan waits for its last product. Products
/// of different plans on different streams may run at the same time.
class Plan {
 public:
  virtual ~Plan() = default;

  /// y = alpha * A*x + beta * y (with k right-hand sides: Y = alpha * A*X + beta * Y, X of cols x k
  /// and Y of rows x k values in the plan's layout), on host memory. alpha and beta are applied in
  /// the kernel's store; beta == 0 does not read y (NaN there is overwritten), as in BLAS. x and y
  /// in the plan's vector type (double for double and mixed plans, float for single ones) are used
  /// as they are; in the other type they are converted (a double x given to a single plan rounded,
  /// a value beyond float's range refused).
  void multiply(std::span<const double> x, std::span<double> y, double alpha = 1.0, double beta = 0.0);
  void multiply(std::span<const float> x, std::span<float> y, float alpha = 1.0f, float beta = 0.0f);
  /// The same on device memory, queued on `stream` (nullptr: the default stream), for CUDA plans
  /// (on_device()): x and y of the plan's vector type (float for single plans, double otherwise).
  /// Host memory given here, device memory given to a CPU plan, a size or type that does not
  /// match: Error naming the argument.
  void multiply(DeviceSpan<const double> x, DeviceSpan<double> y, double alpha = 1.0, double beta = 0.0,
                CudaStream stream = nullptr);
  void multiply(DeviceSpan<const float> x, DeviceSpan<float> y, float alpha = 1.0f, float beta = 0.0f,
                CudaStream stream = nullptr);
  /// Whether the products run on the GPU (device vectors go to multiply; host ones are copied).
  virtual bool on_device() const { return false; }

  /// The plan's own x and y, for timing products alone (the benchmark, time_runs): x holds cols*k
  /// values, y rows*k (layout from the options). GPU plans copy to and from their device vectors.
  virtual void set_x(std::span<const double> x) = 0;
  /// `times` back-to-back products y = A*x on the plan's own vectors; nothing is copied.
  virtual void run(int times = 1) = 0;
  virtual void get_y(std::span<double> y) = 0;
  /// The same in float. A plan keeps x and y in its precision's vector type (float for single,
  /// double otherwise): these convert where the types differ (a double plan widens x exactly and
  /// rounds y; a single plan given double x rounds it).
  virtual void set_x(std::span<const float> x);
  virtual void get_y(std::span<float> y);
  /// Wall seconds of `times` back-to-back products on the plan's own vectors. CPU: steady clock;
  /// GPU plans override this with device events around the kernels only.
  virtual double time_runs(int times);
  /// CPU threads the product runs on, which can be fewer than PlanOptions::threads asked for: 1 for
  /// a serial plan and for an OpenMP plan that fell back to one thread (its trial found one thread
  /// faster on a small matrix, Eigen's serial path below 20000 nonzeros, fewer rows or tiles than
  /// threads), the smaller team one settled on, and never more than the team OpenMP grants (under
  /// OMP_THREAD_LIMIT, OMP_DYNAMIC or inside another parallel region). The plan's `detail` says
  /// why it runs on fewer. 0: not a CPU plan (GPU plans), or a plan that does not say.
  virtual int threads_used() const { return 0; }

  double convert_seconds = 0;               ///< CSR -> this plan's format
  double setup_seconds = 0;                 ///< partitioning, upload, library preprocessing
  offset_t bytes_per_product = 0;           ///< the fewest bytes one product must move (matrix, x, y)
  offset_t stored_entries = 0;              ///< slots stored including padding (= nnz for CSR)
  Precision precision = Precision::Double;  ///< the arithmetic it runs (set by make_plan)
  std::string detail;                       ///< what "auto" chose, e.g. "subwarp=8" or "variant=balanced"
  /// Set by the planner (kernel "auto"): what runs ("cuda/ell bs=256"), and the seconds spent
  /// choosing it (analysis + trial + the conversions of the candidates it did not keep), which
  /// setup_seconds includes.
  std::string chosen;
  double planning_seconds = 0;
  int chosen_threads = 0;  ///< CPU threads the planner gave its choice (0: not a CPU choice)
  /// What was chosen and why (the planner's line), or the kernel's own detail.
  std::string describe() const { return chosen.empty() ? detail : "auto -> " + chosen + ": " + detail; }

 protected:
  /// One product as multiply() was called: x and y untyped (float where `single`, else double),
  /// on the device where `device`, with their sizes as given.
  struct Operands {
    const void* x = nullptr;
    std::size_t nx = 0;
    void* y = nullptr;
    std::size_t ny = 0;
    bool single = false;
    bool device = false;
    double alpha = 1.0, beta = 0.0;
    CudaStream stream = nullptr;
  };
  /// The product of multiply(). Backends override it; this default serves plans that only have
  /// the resident interface: host vectors through set_x, run and get_y, alpha and beta applied after
  /// on the host; device vectors refused.
  virtual void apply(const Operands& o);

  friend class detail::ForwardingPlan;
};

/// One of a kernel's variant choices: a group of words of which PlanOptions::kernel.variant names at most
/// one ("schedule": dynamic or balanced); a group not named is the kernel's to choose per matrix.
/// The grammar of every kernel's variant: "auto", or words joined by ':' in any order.
struct VariantGroup {
  std::string name;
  std::vector<std::string> words;
  std::string help = {};
  bool spmm_only = false;  ///< read only with several right-hand sides (k > 1)
};

struct KernelSpec {
  std::string name;  ///< "csr", "csr-balanced", "ell", "hll", "csr-vector", "cusparse-alg2", ...
  Backend backend;
  std::string format;  ///< storage it needs: "csr", "ell", "hll", "csr5" (kernels of one format share it)
  std::string description;
  bool baseline = false;  ///< a third-party library we compare against (Eigen, cuSPARSE)
  bool spmm = false;      ///< accepts k > 1
  bool for_spmm = false;  ///< an algorithm made for k > 1: the benchmark times it only there (k = 1 still works)
  /// Precisions it computes in; make_plan refuses the others (see PlanOptions::precision).
  std::vector<Precision> precisions = {Precision::Double};
  std::vector<std::string> params;  ///< options that matter: "threads", "block_size", "hack", ...
  /// Does A^T x itself as its library does (PlanOptions::operation reaches it); other kernels are
  /// given A^T, made once by make_plan, for a transposed plan.
  bool transposes = false;
  /// Scatters the rows of the matrix it is given into y (y += a_ij x_i at y_j): A^T x reading A as
  /// stored, with nothing made; a plan of A x gives it A^T, made once by make_plan.
  bool scatters = false;
  /// Gives the same bits on every run (false: it adds with atomics, in whatever order they land).
  bool repeatable = true;
  /// The words PlanOptions::kernel.variant may give it (the registry adds "variant" to params where any).
  std::vector<VariantGroup> variants = {};
  std::function<std::unique_ptr<Plan>(const CsrView&, const PlanOptions&)> make;
};

/// All kernels built into this binary (CUDA ones only when the CUDA backend is built).
const std::vector<KernelSpec>& kernels();
const KernelSpec* find_kernel(Backend b, std::string_view name);
/// Like find_kernel but throws Unsupported listing the kernels that do exist for the backend.
const KernelSpec& get_kernel(Backend b, std::string_view name);
/// make_plan's checks of a request, without making the plan (throws Unsupported): a CUDA kernel needs a
/// usable GPU, the matrix must be real, k >= 1 and k > 1 only for an SpMM kernel, the kernel must
/// compute in the precision (the message names the kernels of `registry` that do), a float matrix
/// cannot be planned in double, and (check_values) every value must fit in float for single and
/// mixed plans; a caller that checked a matrix's values once leaves check_values off.
void validate_plan(const KernelSpec& spec, const CsrView& a, const PlanOptions& opt,
                   const std::vector<KernelSpec>& registry = kernels(), bool check_values = true);
/// The plan of one kernel description (of kernels(), or a caller's own list) whose request passed
/// validate_plan: PlanOptions::operation applied as make_plan applies it (A^T made once where the
/// kernel's product needs it; the planner's choice for "auto"), the plan's precision set.
std::unique_ptr<Plan> make_validated_plan(const KernelSpec& spec, const CsrView& a, const PlanOptions& opt);
/// Looks the kernel up, refuses complex matrices, makes the plan. The default kernel, "auto", is
/// the planner (spmv/planner.hpp): format, kernel and settings chosen for this matrix.
std::unique_ptr<Plan> make_plan(const CsrView& a, Backend b, std::string_view kernel = "auto",
                                const PlanOptions& opt = {});
std::unique_ptr<Plan> make_plan(const CsrView& a, Backend b, const PlanOptions& opt);
/// The same over 32-bit row offsets: the plan keeps a 64-bit copy of row_ptr (8 bytes per row) and
/// borrows col and val as make_plan(CsrView) would. Throws Error if row_ptr's size is not rows + 1.
std::unique_ptr<Plan> make_plan(const CsrView32& a, Backend b, std::string_view kernel = "auto",
                                const PlanOptions& opt = {});
/// The fastest backend present: CUDA when a device is usable, else OpenMP.
Backend default_backend();
/// make_plan(a, default_backend(), "auto", opt).
std::unique_ptr<Plan> make_plan(const CsrView& a, const PlanOptions& opt = {});

/// Effective bytes of one CSR product with this library's index widths, in precision p:
/// (4 + value bytes)*nnz + 8*(rows+1) + vector bytes*(cols + rows)*k (double: 12, 8, 8).
offset_t csr_product_bytes(const CsrView& a, int k = 1, Precision p = Precision::Double);
/// Whether a kernel computes in p.
bool supports(const KernelSpec& spec, Precision p);
/// Throws Unsupported naming the first value of a (row, column, value) beyond float's range, for
/// the plans that store values in float (PlanOptions::precision single or mixed).
void require_float_range(const CsrView& a);

}  // namespace spmv
