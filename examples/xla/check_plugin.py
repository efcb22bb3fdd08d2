#!/usr/bin/env python3
"""Loads a PJRT plugin and prints, as JSON, what it says about itself through the C API.

    python3 examples/xla/check_plugin.py bazel-bin/xla_rocm_plugin.so

Standard library only (ctypes): the plugin is driven the way a framework drives it,
through GetPjrtApi() and the function pointers of PJRT_Api, with argument structs laid
out here independently of the C header, so that a layout mistake on either side shows.
Prints the API's struct_size and version, which of the slots below are set, the plugin
attributes, the result of PJRT_Plugin_Initialize, the error PJRT_Client_Create returns and
the error for an argument struct that is too small (each error is then destroyed).
"""

from __future__ import annotations

import ctypes
import json
import sys

c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p

# PJRT_Api: struct_size, extension_start, PJRT_Api_Version, then 138 function pointers.
API_HEADER_SIZE = 40
SLOT = {
    "PJRT_Error_Destroy": 0,
    "PJRT_Error_Message": 1,
    "PJRT_Error_GetCode": 2,
    "PJRT_Plugin_Initialize": 3,
    "PJRT_Plugin_Attributes": 4,
    "PJRT_Client_Create": 10,
    "PJRT_Error_ForEachPayload": 132,  # measured against jaxlib 0.10.2 (pjrt_c_api.h)
}
NAMED_VALUE_TYPES = {0: "string", 1: "int64", 2: "int64_list", 3: "float", 4: "bool"}


class ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class ApiHead(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
                ("pjrt_api_version", ApiVersion)]


class ErrorArgs(ctypes.Structure):
    """PJRT_Error_Destroy_Args, and the head of the other error argument structs."""
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p), ("error", c_void_p)]


class ErrorMessageArgs(ctypes.Structure):
    _fields_ = ErrorArgs._fields_ + [("message", c_void_p), ("message_size", c_size_t)]


class ErrorGetCodeArgs(ctypes.Structure):
    _fields_ = ErrorArgs._fields_ + [("code", ctypes.c_int)]


PAYLOAD_VISITOR = ctypes.CFUNCTYPE(None, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p)


class ErrorForEachPayloadArgs(ctypes.Structure):
    _fields_ = ErrorArgs._fields_ + [("visitor", PAYLOAD_VISITOR), ("user_arg", c_void_p)]


class ErrorFunctionTable(ctypes.Structure):
    """What a PJRT_Error points to first (0.107+): frameworks may use it instead of PJRT_Api."""
    _fields_ = [("struct_size", c_size_t), ("instance_size", c_size_t), ("extension_start", c_void_p),
                ("destroy", c_void_p), ("message", c_void_p),
                ("get_code", ctypes.CFUNCTYPE(ctypes.c_int, c_void_p)), ("for_each_payload", c_void_p)]


class PluginInitializeArgs(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p)]


class NamedValue(ctypes.Structure):
    class Value(ctypes.Union):
        _fields_ = [("string_value", c_void_p), ("int64_value", ctypes.c_int64),
                    ("int64_array_value", ctypes.POINTER(ctypes.c_int64)),
                    ("float_value", ctypes.c_float), ("bool_value", ctypes.c_bool)]

    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
                ("name", c_void_p), ("name_size", c_size_t), ("type", ctypes.c_int),
                ("value", Value), ("value_size", c_size_t)]


class PluginAttributesArgs(ctypes.Structure):
    _fields_ = PluginInitializeArgs._fields_ + [
        ("attributes", ctypes.POINTER(NamedValue)), ("num_attributes", c_size_t)]


class ClientCreateArgs(ctypes.Structure):
    _fields_ = PluginInitializeArgs._fields_ + [
        ("create_options", c_void_p), ("num_options", c_size_t),
        ("kv_get_callback", c_void_p), ("kv_get_user_arg", c_void_p),
        ("kv_put_callback", c_void_p), ("kv_put_user_arg", c_void_p),
        ("client", c_void_p),
        ("kv_try_get_callback", c_void_p), ("kv_try_get_user_arg", c_void_p)]


class Plugin:
    """The PJRT_Api of one loaded plugin, with its calls made from Python."""

    def __init__(self, path: str):
        self.library = ctypes.CDLL(path)
        get_api = self.library.GetPjrtApi
        get_api.restype = c_void_p
        self.api = get_api()
        if not self.api:
            raise SystemExit(f"{path}: GetPjrtApi() returned NULL")
        self.head = ApiHead.from_address(self.api)

    def function(self, name: str, restype, args_type):
        """The function in slot `name`, or None where the plugin left it NULL."""
        slot = SLOT[name]
        if API_HEADER_SIZE + 8 * (slot + 1) > self.head.struct_size:
            return None
        address = c_void_p.from_address(self.api + API_HEADER_SIZE + 8 * slot).value
        if not address:
            return None
        return ctypes.CFUNCTYPE(restype, ctypes.POINTER(args_type))(address)

    def call(self, name: str, args_type, restype=c_void_p, struct_size=None, **fields):
        """Calls `name` with a fresh argument struct; returns (returned value, the struct)."""
        args = args_type(struct_size=ctypes.sizeof(args_type) if struct_size is None else struct_size, **fields)
        function = self.function(name, restype, args_type)
        if function is None:
            raise SystemExit(f"{name} is not implemented (NULL slot)")
        return function(ctypes.byref(args)), args

    def describe_error(self, error: int | None) -> dict | None:
        """Message and code of `error`, which is then destroyed; None for no error."""
        if not error:
            return None
        _, args = self.call("PJRT_Error_Message", ErrorMessageArgs, restype=None, error=error)
        message = ctypes.string_at(args.message, args.message_size).decode()  # before Destroy frees it
        code_error, code = self.call("PJRT_Error_GetCode", ErrorGetCodeArgs, error=error)
        payloads = []
        visitor = PAYLOAD_VISITOR(lambda key, key_size, *_: payloads.append(ctypes.string_at(key, key_size).decode()))
        self.call("PJRT_Error_ForEachPayload", ErrorForEachPayloadArgs, error=error, visitor=visitor)
        vtable = ErrorFunctionTable.from_address(c_void_p.from_address(error).value)
        described = {
            "message": message, "code": None if code_error else code.code, "payloads": payloads,
            "vtable": {"struct_size": vtable.struct_size, "code": vtable.get_code(error)},
        }
        self.call("PJRT_Error_Destroy", ErrorArgs, restype=None, error=error)
        return described

    def attributes(self) -> dict:
        error, args = self.call("PJRT_Plugin_Attributes", PluginAttributesArgs)
        if error:
            raise SystemExit(f"PJRT_Plugin_Attributes failed: {self.describe_error(error)}")
        return dict(named_value(args.attributes[i]) for i in range(args.num_attributes))


def named_value(value: NamedValue) -> tuple[str, object]:
    name = ctypes.string_at(value.name, value.name_size).decode()
    kind = NAMED_VALUE_TYPES.get(value.type, f"type {value.type}")
    if kind == "string":
        return name, ctypes.string_at(value.value.string_value, value.value_size).decode()
    if kind == "int64_list":
        return name, [value.value.int64_array_value[i] for i in range(value.value_size)]
    if kind in ("int64", "float", "bool"):
        return name, getattr(value.value, f"{kind}_value")
    return name, f"<{kind}>"


def check(path: str) -> dict:
    plugin = Plugin(path)
    version = plugin.head.pjrt_api_version
    initialize_error, _ = plugin.call("PJRT_Plugin_Initialize", PluginInitializeArgs)
    attributes = plugin.attributes()
    client_error, client_args = plugin.call("PJRT_Client_Create", ClientCreateArgs)
    # A caller that passes only struct_size and extension_start must be refused, not trusted.
    short_error, _ = plugin.call("PJRT_Plugin_Attributes", PluginAttributesArgs, struct_size=16)
    return {
        "struct_size": plugin.head.struct_size,
        "extension_start": plugin.head.extension_start,
        "version": {"struct_size": version.struct_size, "major": version.major_version,
                    "minor": version.minor_version},
        "implemented": sorted(name for name in SLOT if plugin.function(name, None, ErrorArgs)),
        "attributes": attributes,
        "initialize": plugin.describe_error(initialize_error) or "ok",
        "client_create": {"client": client_args.client, "error": plugin.describe_error(client_error)},
        "attributes_with_short_struct": plugin.describe_error(short_error),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], "\nusage: check_plugin.py PLUGIN.so", file=sys.stderr)
        return 2
    print(json.dumps(check(argv[1]), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
