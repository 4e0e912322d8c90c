// Constructs the size checker must measure right: each function's length is
// named in its name (lines from its signature to its closing brace).
#include <string>
#define BRACE {

namespace outer {
namespace {

struct Widget {
  Widget(int A) : X{A}, Y(A) { // a constructor's braced initializer
    touch();
  }                            // Widget: 3 lines
  int lines2() const { return X +
                              Y; }
public:
  void touch() {}
  int X, Y;
};

int lines9(int N) {
  const char *S = "}}} { not a brace";
  char C = '{';
  auto L = [&](int K) {
    return K + N; /* } */
  };
  // }
  return L(C) + S[0];
}

const int Table[] = {1, 2, 3};

} // namespace
} // namespace outer

extern "C" int lines5(void) {
  std::string R = R"x( { )x";
  return int(R.size()) +
         1'000;
}

template <typename T>
auto lines4(T V) -> decltype(V + 1) {
  return V + 1;
}
