# What find_package(processkit) loads. Two imported targets:
#   processkit::processkit         the shared library (libprocesskit.so.0)
#   processkit::processkit_static  the static library (libprocesskit.a); it defines PK_STATIC and
#                                  brings Threads::Threads
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include(${CMAKE_CURRENT_LIST_DIR}/processkitTargets.cmake)
