// gradleak's stand-in for the LibTorch headers: parsed instead of <torch/torch.h> (and the other
// LibTorch headers) when the real ones are not found, so that names and types in the linted file
// resolve. It declares only what the C++ front end reads: the tensor type and its methods, the
// grad-mode guards, nn::Module / ModuleHolder and the common modules, optimizers, data loaders,
// and the functions the rules name. Nothing here is ever compiled into a program.
// Written for gradleak (not copied from LibTorch); signatures follow LibTorch 1.13-2.x.
#pragma once
#pragma clang system_header

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace c10 {
enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
enum class ScalarType : int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16 };
struct Device {
  Device(DeviceType type, int8_t index = -1);
  Device(const std::string& spec);
  Device(const char* spec);
  bool is_cuda() const;
};
struct Scalar {
  Scalar();
  Scalar(double v);
  Scalar(int64_t v);
  Scalar(int v);
  template <typename T> T to() const;
  double toDouble() const;
  float toFloat() const;
  int64_t toLong() const;
  int toInt() const;
  bool toBool() const;
};
template <typename T> struct optional {
  optional();
  optional(T v);
  T value() const;
  bool has_value() const;
};
template <typename T> struct ArrayRef {
  ArrayRef();
  ArrayRef(const T& one);
  ArrayRef(std::initializer_list<T> list);
  ArrayRef(const std::vector<T>& v);
  size_t size() const;
};
using IntArrayRef = ArrayRef<int64_t>;
struct TensorOptions {
  TensorOptions();
  TensorOptions(ScalarType t);
  TensorOptions(DeviceType d);
  TensorOptions(Device d);
  TensorOptions dtype(ScalarType t) const;
  TensorOptions device(Device d) const;
  TensorOptions requires_grad(bool r = true) const;
};
// Grad-mode guards: RAII objects whose scope turns autograd off (or on).
struct InferenceMode {
  InferenceMode(bool enabled = true);
};
namespace cuda {
void synchronize();
namespace CUDACachingAllocator {
void emptyCache();
}
}  // namespace cuda
}  // namespace c10

namespace at {
using c10::Device;
using c10::DeviceType;
using c10::IntArrayRef;
using c10::kCPU;
using c10::kCUDA;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorOptions;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kFloat64 = ScalarType::Double;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

class Tensor;
using TensorList = c10::ArrayRef<Tensor>;

class Tensor {
 public:
  Tensor();
  Tensor(const Tensor&);
  Tensor(Tensor&&);
  Tensor& operator=(const Tensor&) &;
  Tensor& operator=(Tensor&&) &;
  Tensor& operator=(Scalar) &;
  bool defined() const;
  // graph
  Tensor detach() const;
  Tensor& detach_();
  void backward(const Tensor& gradient = {}, c10::optional<bool> retain_graph = {}, bool create_graph = false,
                c10::optional<TensorList> inputs = {}) const;
  Tensor grad() const;
  Tensor& mutable_grad();
  bool requires_grad() const;
  Tensor& requires_grad_(bool r = true);
  Tensor data() const;
  void retain_grad() const;
  // values that leave the graph
  Scalar item() const;
  template <typename T> T item() const;
  template <typename T> T* data_ptr() const;
  // device and dtype conversions: each returns a NEW tensor
  Tensor to(Device d, bool non_blocking = false, bool copy = false) const;
  Tensor to(ScalarType t, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device d, ScalarType t, bool non_blocking = false, bool copy = false) const;
  Tensor to(TensorOptions o, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor to(DeviceType d, bool non_blocking = false, bool copy = false) const;
  Tensor cuda() const;
  Tensor cpu() const;
  Tensor half() const;
  Tensor toType(ScalarType t) const;
  Tensor contiguous() const;
  Tensor clone() const;
  // shape
  int64_t size(int64_t dim) const;
  IntArrayRef sizes() const;
  int64_t dim() const;
  int64_t numel() const;
  Device device() const;
  bool is_cuda() const;
  ScalarType scalar_type() const;
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef size) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor expand(IntArrayRef size) const;
  std::vector<Tensor> split(int64_t size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  // arithmetic and reductions
  Tensor sum() const;
  Tensor sum(IntArrayRef dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dim, bool keepdim = false) const;
  Tensor norm() const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor pow(Scalar e) const;
  Tensor neg() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor relu() const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor mm(const Tensor& other) const;
  Tensor matmul(const Tensor& other) const;
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  Tensor argmax(c10::optional<int64_t> dim = {}, bool keepdim = false) const;
  Tensor argmin(c10::optional<int64_t> dim = {}, bool keepdim = false) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(Scalar other) const;
  Tensor ne(const Tensor& other) const;
  Tensor gt(Scalar other) const;
  Tensor lt(Scalar other) const;
  Tensor all() const;
  Tensor any() const;
  Tensor toFloat() const;
  Tensor multinomial(int64_t n, bool replacement = false) const;
  Tensor clamp(c10::optional<Scalar> lo, c10::optional<Scalar> hi = {}) const;
  // in place
  Tensor& zero_();
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(Scalar other);
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& fill_(Scalar v);
  Tensor& clamp_(c10::optional<Scalar> lo, c10::optional<Scalar> hi = {});
  Tensor& normal_(double mean = 0, double std = 1);
  Tensor& uniform_(double from = 0, double to = 1);
  // indexing and operators
  Tensor operator[](int64_t index) const;
  Tensor operator[](const Tensor& index) const;
  Tensor index(std::initializer_list<int64_t> idx) const;
  Tensor& index_put_(std::initializer_list<int64_t> idx, const Tensor& v);
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor& operator+=(const Tensor& other);
  Tensor& operator+=(Scalar other);
  Tensor& operator-=(const Tensor& other);
  Tensor& operator-=(Scalar other);
  Tensor& operator*=(const Tensor& other);
  Tensor& operator*=(Scalar other);
  Tensor& operator/=(const Tensor& other);
  Tensor& operator/=(Scalar other);
  Tensor operator-() const;
};
std::ostream& operator<<(std::ostream& out, const Tensor& t);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
}  // namespace at

namespace torch {
using at::Tensor;
using at::TensorList;
using c10::Device;
using c10::DeviceType;
using c10::IntArrayRef;
using c10::kCPU;
using c10::kCUDA;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorOptions;
using at::kBFloat16;
using at::kBool;
using at::kDouble;
using at::kFloat;
using at::kFloat32;
using at::kHalf;
using at::kInt;
using at::kLong;
using at::kInt64;
using at::kInt32;
using at::kFloat64;
using c10::InferenceMode;
using TensorOptions = c10::TensorOptions;
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

// Grad-mode guards (torch/csrc/autograd/grad_mode.h).
struct NoGradGuard {
  NoGradGuard();
};
struct AutoGradMode {
  AutoGradMode(bool enabled);
};
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
namespace autograd {
using torch::AutoGradMode;
using torch::GradMode;
using torch::NoGradGuard;
using variable_list = std::vector<Tensor>;
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              c10::optional<bool> retain_graph = {}, bool create_graph = false);
variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs = {}, c10::optional<bool> retain_graph = {},
                   bool create_graph = false, bool allow_unused = false);
}  // namespace autograd

// Factories.
Tensor tensor(std::initializer_list<double> values, TensorOptions o = {});
Tensor tensor(double value, TensorOptions o = {});
Tensor zeros(IntArrayRef size, TensorOptions o = {});
Tensor ones(IntArrayRef size, TensorOptions o = {});
Tensor empty(IntArrayRef size, TensorOptions o = {});
Tensor full(IntArrayRef size, Scalar v, TensorOptions o = {});
Tensor rand(IntArrayRef size, TensorOptions o = {});
Tensor randn(IntArrayRef size, TensorOptions o = {});
Tensor randint(int64_t high, IntArrayRef size, TensorOptions o = {});
Tensor arange(Scalar end, TensorOptions o = {});
Tensor eye(int64_t n, TensorOptions o = {});
Tensor zeros_like(const Tensor& t, TensorOptions o = {});
Tensor ones_like(const Tensor& t, TensorOptions o = {});
Tensor randn_like(const Tensor& t, TensorOptions o = {});
Tensor empty_like(const Tensor& t, TensorOptions o = {});
Tensor from_blob(void* data, IntArrayRef size, TensorOptions o = {});
// Differentiable functions (a few; any other torch:: function is taken as differentiable).
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor max_pool2d(const Tensor& x, IntArrayRef k);
Tensor dropout(const Tensor& x, double p, bool train);
Tensor cat(TensorList ts, int64_t dim = 0);
Tensor stack(TensorList ts, int64_t dim = 0);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor sum(const Tensor& x);
Tensor mean(const Tensor& x);
Tensor pow(const Tensor& x, Scalar e);
Tensor clamp(const Tensor& x, c10::optional<Scalar> lo, c10::optional<Scalar> hi = {});
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b);
Tensor argmax(const Tensor& x, c10::optional<int64_t> dim = {}, bool keepdim = false);
Tensor multinomial(const Tensor& p, int64_t n, bool replacement = false);
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
namespace Reduction {
enum Reduction { None, Mean, Sum };
}
// Losses (0-dim with the default reduction).
Tensor nll_loss(const Tensor& x, const Tensor& t, const Tensor& w = {}, int64_t reduction = Reduction::Mean);
Tensor mse_loss(const Tensor& x, const Tensor& t, int64_t reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& x, const Tensor& t, int64_t reduction = Reduction::Mean);
Tensor cross_entropy_loss(const Tensor& x, const Tensor& t, const Tensor& w = {}, int64_t reduction = Reduction::Mean);
Tensor binary_cross_entropy(const Tensor& x, const Tensor& t, const Tensor& w = {}, int64_t reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& t);
Tensor smooth_l1_loss(const Tensor& x, const Tensor& t, int64_t reduction = Reduction::Mean);
Tensor kl_div(const Tensor& x, const Tensor& t, int64_t reduction = Reduction::Mean);
void manual_seed(uint64_t seed);
void save(const Tensor& t, const std::string& path);
namespace cuda {
bool is_available();
int64_t device_count();
void synchronize(int64_t device = -1);
}  // namespace cuda

namespace nn {
class Module {
 public:
  Module();
  Module(std::string name);
  virtual ~Module();
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  template <typename M> std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> m);
  template <typename H> H register_module(std::string name, H holder);
  Tensor& register_parameter(std::string name, Tensor t, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor t);
  virtual void train(bool on = true);
  void eval();
  bool is_training() const;
  virtual void to(Device d, bool non_blocking = false);
  virtual void to(ScalarType t, bool non_blocking = false);
  void zero_grad(bool set_to_none = true);
};
// A ModuleHolder wraps std::shared_ptr<Impl>: `holder->forward(x)` and `holder(x)` call the module.
template <typename Contained> class ModuleHolder {
 public:
  ModuleHolder();
  ModuleHolder(std::nullptr_t);
  template <typename... Args> explicit ModuleHolder(Args&&... args);
  ModuleHolder(std::shared_ptr<Contained> p);
  Contained* operator->() const;
  Contained& operator*() const;
  const std::shared_ptr<Contained>& ptr() const;
  Contained* get() const;
  bool is_empty() const;
  template <typename... Args> Tensor operator()(Args&&... args);
};
#define TORCH_MODULE(Name)                                          \
  class Name : public torch::nn::ModuleHolder<Name##Impl> {         \
   public:                                                          \
    using torch::nn::ModuleHolder<Name##Impl>::ModuleHolder;        \
  }

struct LinearOptions { LinearOptions(int64_t in, int64_t out); LinearOptions bias(bool b); };
struct Conv2dOptions {
  Conv2dOptions(int64_t in, int64_t out, IntArrayRef k);
  Conv2dOptions stride(IntArrayRef s); Conv2dOptions padding(IntArrayRef p); Conv2dOptions bias(bool b);
};
struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in, int64_t out, IntArrayRef k);
  ConvTranspose2dOptions stride(IntArrayRef s); ConvTranspose2dOptions padding(IntArrayRef p);
  ConvTranspose2dOptions bias(bool b);
};
struct LSTMOptions {
  LSTMOptions(int64_t in, int64_t hidden);
  LSTMOptions num_layers(int64_t n); LSTMOptions batch_first(bool b); LSTMOptions dropout(double p);
};
struct GRUOptions { GRUOptions(int64_t in, int64_t hidden); GRUOptions num_layers(int64_t n); GRUOptions batch_first(bool b); };
struct EmbeddingOptions { EmbeddingOptions(int64_t n, int64_t dim); };
struct DropoutOptions { DropoutOptions(double p = 0.5); };
struct LeakyReLUOptions { LeakyReLUOptions(); LeakyReLUOptions negative_slope(double s); };
struct CrossEntropyLossOptions { CrossEntropyLossOptions(); CrossEntropyLossOptions reduction(int64_t r); };
struct MSELossOptions { MSELossOptions(); MSELossOptions reduction(int64_t r); };

struct LinearImpl : Module { LinearImpl(int64_t in, int64_t out); LinearImpl(LinearOptions o); Tensor forward(const Tensor& x); Tensor weight, bias; };
struct Conv2dImpl : Module { Conv2dImpl(int64_t in, int64_t out, int64_t k); Conv2dImpl(Conv2dOptions o); Tensor forward(const Tensor& x); Tensor weight, bias; };
struct ConvTranspose2dImpl : Module { ConvTranspose2dImpl(ConvTranspose2dOptions o); Tensor forward(const Tensor& x); };
struct BatchNorm1dImpl : Module { BatchNorm1dImpl(int64_t n); Tensor forward(const Tensor& x); };
struct BatchNorm2dImpl : Module { BatchNorm2dImpl(int64_t n); Tensor forward(const Tensor& x); };
struct Dropout2dImpl : Module { Dropout2dImpl(DropoutOptions o = {}); Tensor forward(const Tensor& x); };
struct DropoutImpl : Module { DropoutImpl(DropoutOptions o = {}); Tensor forward(const Tensor& x); };
struct ReLUImpl : Module { ReLUImpl(); Tensor forward(const Tensor& x); };
struct SigmoidImpl : Module { SigmoidImpl(); Tensor forward(const Tensor& x); };
struct TanhImpl : Module { TanhImpl(); Tensor forward(const Tensor& x); };
struct LeakyReLUImpl : Module { LeakyReLUImpl(LeakyReLUOptions o = {}); Tensor forward(const Tensor& x); };
struct EmbeddingImpl : Module { EmbeddingImpl(int64_t n, int64_t dim); EmbeddingImpl(EmbeddingOptions o); Tensor forward(const Tensor& x); };
struct LSTMImpl : Module {
  LSTMImpl(int64_t in, int64_t hidden);
  LSTMImpl(LSTMOptions o);
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& x, c10::optional<std::tuple<Tensor, Tensor>> hx = {});
};
struct GRUImpl : Module {
  GRUImpl(int64_t in, int64_t hidden);
  GRUImpl(GRUOptions o);
  std::tuple<Tensor, Tensor> forward(const Tensor& x, Tensor hx = {});
};
struct LSTMCellImpl : Module {
  LSTMCellImpl(int64_t in, int64_t hidden);
  std::tuple<Tensor, Tensor> forward(const Tensor& x, c10::optional<std::tuple<Tensor, Tensor>> hx = {});
};
struct GRUCellImpl : Module { GRUCellImpl(int64_t in, int64_t hidden); Tensor forward(const Tensor& x, Tensor hx = {}); };
struct SequentialImpl : Module {
  SequentialImpl();
  template <typename... M> SequentialImpl(M&&... modules);
  template <typename M> void push_back(M&& m);
  Tensor forward(const Tensor& x);
};
struct CrossEntropyLossImpl : Module { CrossEntropyLossImpl(CrossEntropyLossOptions o = {}); Tensor forward(const Tensor& x, const Tensor& t); };
struct MSELossImpl : Module { MSELossImpl(MSELossOptions o = {}); Tensor forward(const Tensor& x, const Tensor& t); };
struct NLLLossImpl : Module { NLLLossImpl(); Tensor forward(const Tensor& x, const Tensor& t); };
struct BCELossImpl : Module { BCELossImpl(); Tensor forward(const Tensor& x, const Tensor& t); };
struct L1LossImpl : Module { L1LossImpl(); Tensor forward(const Tensor& x, const Tensor& t); };
TORCH_MODULE(Linear);
TORCH_MODULE(Conv2d);
TORCH_MODULE(ConvTranspose2d);
TORCH_MODULE(BatchNorm1d);
TORCH_MODULE(BatchNorm2d);
TORCH_MODULE(Dropout);
TORCH_MODULE(Dropout2d);
TORCH_MODULE(ReLU);
TORCH_MODULE(Sigmoid);
TORCH_MODULE(Tanh);
TORCH_MODULE(LeakyReLU);
TORCH_MODULE(Embedding);
TORCH_MODULE(LSTM);
TORCH_MODULE(GRU);
TORCH_MODULE(LSTMCell);
TORCH_MODULE(GRUCell);
TORCH_MODULE(Sequential);
TORCH_MODULE(CrossEntropyLoss);
TORCH_MODULE(MSELoss);
TORCH_MODULE(NLLLoss);
TORCH_MODULE(BCELoss);
TORCH_MODULE(L1Loss);
namespace functional {
Tensor relu(const Tensor& x);
Tensor cross_entropy(const Tensor& x, const Tensor& t);
Tensor nll_loss(const Tensor& x, const Tensor& t);
Tensor mse_loss(const Tensor& x, const Tensor& t);
}  // namespace functional
namespace utils {
double clip_grad_norm_(std::vector<Tensor> params, double max_norm);
}
}  // namespace nn

namespace optim {
struct OptimizerOptions {};
class Optimizer {
 public:
  virtual ~Optimizer();
  virtual Tensor step(std::function<Tensor()> closure = nullptr);
  void zero_grad(bool set_to_none = true);
};
struct SGDOptions { SGDOptions(double lr); SGDOptions momentum(double m); SGDOptions weight_decay(double w); };
struct AdamOptions {
  AdamOptions(double lr = 1e-3);
  AdamOptions betas(std::tuple<double, double> b); AdamOptions weight_decay(double w);
};
struct AdamWOptions { AdamWOptions(double lr = 1e-3); AdamWOptions weight_decay(double w); };
class SGD : public Optimizer { public: SGD(std::vector<Tensor> params, SGDOptions o); };
class Adam : public Optimizer { public: Adam(std::vector<Tensor> params, AdamOptions o = {}); };
class AdamW : public Optimizer { public: AdamW(std::vector<Tensor> params, AdamWOptions o = {}); };
}  // namespace optim

namespace data {
template <typename Data = Tensor, typename Target = Tensor> struct Example {
  Example();
  Example(Data d, Target t);
  Data data;
  Target target;
};
namespace samplers {
struct RandomSampler {};
struct SequentialSampler {};
}  // namespace samplers
namespace transforms {
template <typename T = Example<>> struct Stack {};
template <typename T = Tensor> struct Normalize { Normalize(double mean, double stddev); };
}  // namespace transforms
// Iterating a data loader yields one batch per training step.
template <typename Batch = std::vector<Example<>>> class DataLoader {
 public:
  struct iterator {
    Batch& operator*();
    Batch* operator->();
    iterator& operator++();
    bool operator!=(const iterator& other) const;
    bool operator==(const iterator& other) const;
  };
  iterator begin();
  iterator end();
};
namespace datasets {
template <typename Self, typename Batch = std::vector<Example<>>> struct Dataset {
  template <typename T> Self map(T transform) &&;
  c10::optional<size_t> size() const;
};
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index);
};
}  // namespace datasets
struct DataLoaderOptions { DataLoaderOptions(size_t batch_size = 1); DataLoaderOptions workers(size_t n); };
template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<DataLoader<Example<>>> make_data_loader(Dataset dataset, size_t batch_size);
template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<DataLoader<Example<>>> make_data_loader(Dataset dataset, DataLoaderOptions o);
}  // namespace data

namespace jit {
namespace script {
struct Module {
  Module();
  Tensor forward(std::vector<Tensor> inputs);
  void eval();
  void train(bool on = true);
  void to(Device d);
  std::vector<Tensor> parameters() const;
};
}  // namespace script
using script::Module;
}  // namespace jit
jit::script::Module load_module(const std::string& path);
namespace jit {
script::Module load(const std::string& path);
}
}  // namespace torch
