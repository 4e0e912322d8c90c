// Times guard.cu's two kernels on the CpuExecutor with 1 worker.
#include "cleave/rt/CpuExecutor.h"
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
extern "C" const cleave_cpu_kernel_desc __cleave_cpu_vg_desc, __cleave_cpu_vng_desc;
int main(){ int n=1<<24; std::vector<float> a(n,1),b(n,2),c(n);
 const float*pa=a.data(),*pb=b.data(); float*pc=c.data(); void*args[]={&pa,&pb,&pc,&n};
 cleave::rt::CpuExecutor ex(1); cleave_cpu_launch L{{unsigned(n/256),1,1},{256,1,1},0};
 for(auto*d:{&__cleave_cpu_vg_desc,&__cleave_cpu_vng_desc,&__cleave_cpu_vg_desc,&__cleave_cpu_vng_desc}){ std::vector<double> t;
  for(int r=0;r<12;r++){auto t0=std::chrono::steady_clock::now(); ex.launch(*d,args,L); t.push_back(std::chrono::duration<double,std::milli>(std::chrono::steady_clock::now()-t0).count());}
  std::sort(t.begin(),t.end()); printf("%s median %.2f ms\n", d->name, t[6]);} }
