// Payload write probe: how fast one process can write a payload file into page
// cache, three ways: fwrite from one thread; ftruncate + mmap with T threads
// copying; posix_fallocate then pwrite. Writes N MiB in 5 MiB pieces.
// Build: g++ -O2 -pthread scripts/experiments/payload_write_probe.cpp -o payload_write_probe
// Usage: payload_write_probe PATH THREADS MIB   (PATH is created and removed)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <cstdlib>
double now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  const char* path=argv[1]; unsigned T=atoi(argv[2]); size_t N=size_t(atol(argv[3]))<<20; size_t chunk=5<<20;
  std::vector<char> src(chunk,1);
  // A: fwrite
  unlink(path); double t0=now(); FILE*f=fopen(path,"wb"); for(size_t o=0;o<N;o+=chunk) fwrite(src.data(),1,chunk,f); fclose(f); double a=now()-t0;
  // B: sparse ftruncate + mmap, T threads
  unlink(path); t0=now(); int fd=open(path,O_RDWR|O_CREAT|O_TRUNC,0644); ftruncate(fd,N); char*m=(char*)mmap(0,N,PROT_WRITE,MAP_SHARED,fd,0);
  for(size_t o=0;o<N;o+=chunk){ std::vector<std::thread> th; for(unsigned i=0;i<T;i++) th.emplace_back([&,i]{size_t lo=chunk*i/T, hi=chunk*(i+1)/T; memcpy(m+o+lo,src.data()+lo,hi-lo);}); for(auto&x:th)x.join(); }
  munmap(m,N); close(fd); double b=now()-t0;
  // C: fallocate then pwrite
  unlink(path); t0=now(); fd=open(path,O_RDWR|O_CREAT|O_TRUNC,0644); posix_fallocate(fd,0,N); double c1=now()-t0; for(size_t o=0;o<N;o+=chunk) pwrite(fd,src.data(),chunk,o); close(fd); double c=now()-t0;
  printf("%u threads, %zu MB: fwrite %.2f GB/s; mmap parallel %.2f GB/s; fallocate %.2f GB/s then pwrite total %.2f GB/s\n",T,N>>20,N/a/1e9,N/b/1e9,N/c1/1e9,N/c/1e9);
  unlink(path);
}
