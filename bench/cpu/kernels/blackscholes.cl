// Black-Scholes call/put prices. Same kernel as blackscholes.cu.
inline float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f,
              RSQRT2PI = 0.39894228040143267794f;
  float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
  float c = RSQRT2PI * exp(-0.5f * d * d) *
            (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  return d > 0 ? 1.0f - c : c;
}

__kernel void blackscholes(__global float *call, __global float *put,
                           __global const float *price,
                           __global const float *strike,
                           __global const float *years, float r, float v,
                           int n) {
  int i = get_global_id(0);
  if (i >= n)
    return;
  float S = price[i], X = strike[i], T = years[i];
  float sqrtT = sqrt(T);
  float d1 = (log(S / X) + (r + 0.5f * v * v) * T) / (v * sqrtT);
  float d2 = d1 - v * sqrtT;
  float expRT = exp(-r * T);
  call[i] = S * cnd(d1) - X * expRT * cnd(d2);
  put[i] = X * expRT * (1.0f - cnd(d2)) - S * (1.0f - cnd(d1));
}
