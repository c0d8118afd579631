# FindLibreOfficeSDK.cmake: finds the LibreOffice SDK that a C++ UNO component
# is built with, and the office's type libraries it is compiled against.
#
# Hints: LibreOfficeSDK_ROOT (the SDK folder, with include/ and bin/) and
# LibreOffice_PROGRAM_DIR (the office's program/ folder), or the variables the
# SDK's setsdkenv script exports (OO_SDK_HOME, OFFICE_PROGRAM_PATH).
#
# Defines
#   LibreOfficeSDK_FOUND
#   LibreOfficeSDK_CPPUMAKER       cppumaker: C++ headers from type libraries
#   LibreOfficeSDK_UNOIDL_WRITE    unoidl-write: a type library from .idl files
#   LibreOfficeSDK_UNOIDL_READ     unoidl-read: a type library back as IDL text
#   LibreOfficeSDK_TYPES_RDB       the office's core types (types.rdb)
#   LibreOfficeSDK_OFFAPI_RDB      the office's API types (types/offapi.rdb)
#   LibreOffice_PROGRAM_DIR        the office's program/ folder (soffice, unopkg)
#   LibreOfficeSDK::SDK            an imported target: includes, definitions, UNO runtime libraries

set(_lo_roots /usr/lib/libreoffice /usr/lib64/libreoffice /usr/local/lib/libreoffice /opt/libreoffice)

find_path(LibreOffice_PROGRAM_DIR
  NAMES types.rdb
  HINTS ENV OFFICE_PROGRAM_PATH
  PATHS ${_lo_roots}
  PATH_SUFFIXES program
  DOC "The LibreOffice program/ folder")

find_path(LibreOfficeSDK_ROOT
  NAMES include/cppuhelper/implbase4.hxx
  HINTS ENV OO_SDK_HOME
  PATHS ${_lo_roots}
  PATH_SUFFIXES sdk
  DOC "The LibreOffice SDK folder")

# Checked apart from the folder, so that a folder given by hand is checked too.
find_file(LibreOfficeSDK_IMPLBASE_HEADER NAMES cppuhelper/implbase4.hxx
  HINTS ${LibreOfficeSDK_ROOT}/include NO_DEFAULT_PATH)

set(_lo_tool_dirs ${LibreOfficeSDK_ROOT}/bin ${LibreOffice_PROGRAM_DIR})
find_program(LibreOfficeSDK_CPPUMAKER NAMES cppumaker HINTS ${_lo_tool_dirs})
find_program(LibreOfficeSDK_UNOIDL_WRITE NAMES unoidl-write HINTS ${_lo_tool_dirs})
find_program(LibreOfficeSDK_UNOIDL_READ NAMES unoidl-read HINTS ${_lo_tool_dirs})
find_file(LibreOfficeSDK_TYPES_RDB NAMES types.rdb HINTS ${LibreOffice_PROGRAM_DIR} NO_DEFAULT_PATH)
find_file(LibreOfficeSDK_OFFAPI_RDB NAMES offapi.rdb HINTS ${LibreOffice_PROGRAM_DIR}/types NO_DEFAULT_PATH)

set(_lo_lib_dirs ${LibreOfficeSDK_ROOT}/lib ${LibreOffice_PROGRAM_DIR})
find_library(LibreOfficeSDK_CPPUHELPER_LIBRARY NAMES uno_cppuhelpergcc3 HINTS ${_lo_lib_dirs})
find_library(LibreOfficeSDK_CPPU_LIBRARY NAMES uno_cppu HINTS ${_lo_lib_dirs})
find_library(LibreOfficeSDK_SAL_LIBRARY NAMES uno_sal HINTS ${_lo_lib_dirs})

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibreOfficeSDK
  REQUIRED_VARS LibreOfficeSDK_ROOT LibreOfficeSDK_IMPLBASE_HEADER LibreOffice_PROGRAM_DIR
                LibreOfficeSDK_CPPUMAKER LibreOfficeSDK_UNOIDL_WRITE
                LibreOfficeSDK_TYPES_RDB LibreOfficeSDK_OFFAPI_RDB
                LibreOfficeSDK_CPPUHELPER_LIBRARY LibreOfficeSDK_CPPU_LIBRARY LibreOfficeSDK_SAL_LIBRARY
  REASON_FAILURE_MESSAGE
    "The Calc add-in needs the LibreOffice SDK (Debian: libreoffice-dev libreoffice-dev-common). \
Set LibreOfficeSDK_ROOT and LibreOffice_PROGRAM_DIR, or configure with -DSTATGPU_ADDIN=OFF.")

if(LibreOfficeSDK_FOUND AND NOT TARGET LibreOfficeSDK::SDK)
  add_library(LibreOfficeSDK::SDK INTERFACE IMPORTED)
  target_include_directories(LibreOfficeSDK::SDK SYSTEM INTERFACE ${LibreOfficeSDK_ROOT}/include)
  # The SDK's compiler settings for GCC on Linux (settings/settings.mk).
  target_compile_definitions(LibreOfficeSDK::SDK INTERFACE UNX GCC LINUX CPPU_ENV=gcc3)
  target_link_libraries(LibreOfficeSDK::SDK INTERFACE
    ${LibreOfficeSDK_CPPUHELPER_LIBRARY} ${LibreOfficeSDK_CPPU_LIBRARY} ${LibreOfficeSDK_SAL_LIBRARY})
endif()

mark_as_advanced(LibreOfficeSDK_IMPLBASE_HEADER LibreOfficeSDK_CPPUMAKER LibreOfficeSDK_UNOIDL_WRITE LibreOfficeSDK_UNOIDL_READ
  LibreOfficeSDK_TYPES_RDB LibreOfficeSDK_OFFAPI_RDB LibreOfficeSDK_CPPUHELPER_LIBRARY
  LibreOfficeSDK_CPPU_LIBRARY LibreOfficeSDK_SAL_LIBRARY)
