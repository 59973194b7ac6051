#!/usr/bin/env python3
"""Write crates/proto/proto/*.proto from the descriptors the TensorFlow pip package ships.

rtfprof reads TensorFlow's wire formats, so its schemas must carry TensorFlow's
packages, message names, field names and numbers exactly.  Nothing here is typed
by hand: every file is printed from the `DESCRIPTOR` of a `*_pb2` module, with
all its transitive imports.

    python tools/gen_protos.py            # needs `pip install tensorflow-cpu`

The printer emits what matters for the wire and for text format (syntax,
package, imports, messages, enums, maps, oneofs, proto3 `optional`, `packed`,
reserved ranges, services); file and language options are left out.

The profiler service (`rtfprof capture`'s gRPC client) has no `*_pb2` module in
the package: TensorFlow ships it only compiled into `libtensorflow_cc.so.2`,
where protoc's generated C++ keeps each file's serialized FileDescriptorProto.
`descriptor_from_library` finds those bytes by the file name they start with
and reads them back, so those files come from the very same package.
"""
import os
import sys

from google.protobuf import descriptor_pb2

ROOT_MODULES = [
    "tensorflow.core.framework.graph_pb2",          # GraphDef and all it contains
    "tensorflow.core.protobuf.config_pb2",          # RunMetadata, StepStats, CostGraphDef
    "tensorflow.core.profiler.tfprof_log_pb2",      # OpLogProto, ProfileProto
    "tensorflow.core.profiler.tfprof_options_pb2",  # OptionsProto (the oracle's options)
    "tensorflow.core.profiler.tfprof_output_pb2",   # GraphNodeProto: what tf.profiler returns
    "tensorflow.core.profiler.profile_pb2",         # pprof Profile
    "tensorflow.core.protobuf.tensor_bundle_pb2",   # checkpoint index entries
    "tensorflow.tsl.profiler.protobuf.xplane_pb2",  # XSpace: TF2 / JAX profiler traces
    "tensorflow.compiler.xla.service.hlo_pb2",      # HloProto: JAX op names in XPlane metadata
    "tensorflow.core.util.event_pb2",               # TensorBoard Event, Summary
    "tensorflow.tsl.profiler.protobuf.profiler_options_pb2",  # ProfileOptions (capture)
]

# Files with no `*_pb2` module, read from the descriptors compiled into this
# shared library of the package (see descriptor_from_library).
LIBRARY = "libtensorflow_cc.so.2"
LIBRARY_FILES = [
    "tsl/profiler/protobuf/profiler_service.proto",                 # ProfilerService.Profile
    "tsl/profiler/protobuf/profiler_service_monitor_result.proto",  # imported by it
]

F = descriptor_pb2.FieldDescriptorProto
SCALAR = {
    F.TYPE_DOUBLE: "double", F.TYPE_FLOAT: "float", F.TYPE_INT64: "int64",
    F.TYPE_UINT64: "uint64", F.TYPE_INT32: "int32", F.TYPE_FIXED64: "fixed64",
    F.TYPE_FIXED32: "fixed32", F.TYPE_BOOL: "bool", F.TYPE_STRING: "string",
    F.TYPE_BYTES: "bytes", F.TYPE_UINT32: "uint32", F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64", F.TYPE_SINT32: "sint32", F.TYPE_SINT64: "sint64",
}


def type_name(field):
    return SCALAR.get(field.type) or field.type_name


def field_options(field, syntax):
    opts = []
    if field.options.HasField("packed"):
        opts.append("packed = %s" % str(field.options.packed).lower())
    if field.options.deprecated:
        opts.append("deprecated = true")
    if field.HasField("default_value") and syntax == "proto2":
        value = field.default_value
        if field.type in (F.TYPE_STRING, F.TYPE_BYTES):
            value = '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"')
        opts.append("default = %s" % value)
    return " [%s]" % ", ".join(opts) if opts else ""


def print_enum(enum, out, indent):
    pad = "  " * indent
    out.append("%senum %s {" % (pad, enum.name))
    if enum.options.allow_alias:
        out.append("%s  option allow_alias = true;" % pad)
    for value in enum.value:
        dep = " [deprecated = true]" if value.options.deprecated else ""
        out.append("%s  %s = %d%s;" % (pad, value.name, value.number, dep))
    for r in enum.reserved_range:
        out.append("%s  reserved %s;" % (pad, fmt_range(r.start, r.end, inclusive_end=True)))
    if enum.reserved_name:
        out.append("%s  reserved %s;" % (pad, ", ".join('"%s"' % n for n in enum.reserved_name)))
    out.append("%s}" % pad)


def fmt_range(start, end, inclusive_end=False):
    last = end if inclusive_end else end - 1
    if last >= 536870911:
        return "%d to max" % start
    return str(start) if start == last else "%d to %d" % (start, last)


def print_message(msg, out, indent, syntax):
    pad = "  " * indent
    out.append("%smessage %s {" % (pad, msg.name))
    map_entries = {n.name: n for n in msg.nested_type if n.options.map_entry}
    printed_oneofs = set()

    def field_line(field, pad2, in_oneof=False):
        short = field.type_name.rsplit(".", 1)[-1]
        if field.label == F.LABEL_REPEATED and field.type == F.TYPE_MESSAGE and short in map_entries \
                and field.type_name.endswith("." + msg.name + "." + short):
            entry = map_entries[short]
            k, v = entry.field[0], entry.field[1]
            return "%smap<%s, %s> %s = %d%s;" % (pad2, type_name(k), type_name(v), field.name,
                                                field.number, field_options(field, syntax))
        label = ""
        if not in_oneof:
            if field.label == F.LABEL_REPEATED:
                label = "repeated "
            elif field.label == F.LABEL_REQUIRED:
                label = "required "
            elif syntax == "proto2" or field.proto3_optional:
                label = "optional "
        return "%s%s%s %s = %d%s;" % (pad2, label, type_name(field), field.name, field.number,
                                     field_options(field, syntax))

    for field in msg.field:
        real_oneof = field.HasField("oneof_index") and not field.proto3_optional
        if real_oneof:
            idx = field.oneof_index
            if idx in printed_oneofs:
                continue
            printed_oneofs.add(idx)
            out.append("%s  oneof %s {" % (pad, msg.oneof_decl[idx].name))
            for f2 in msg.field:
                if f2.HasField("oneof_index") and f2.oneof_index == idx and not f2.proto3_optional:
                    out.append(field_line(f2, pad + "    ", in_oneof=True))
            out.append("%s  }" % pad)
        else:
            out.append(field_line(field, pad + "  "))
    for nested in msg.nested_type:
        if not nested.options.map_entry:
            print_message(nested, out, indent + 1, syntax)
    for enum in msg.enum_type:
        print_enum(enum, out, indent + 1)
    for r in msg.reserved_range:
        out.append("%s  reserved %s;" % (pad, fmt_range(r.start, r.end)))
    if msg.reserved_name:
        out.append("%s  reserved %s;" % (pad, ", ".join('"%s"' % n for n in msg.reserved_name)))
    out.append("%s}" % pad)


def print_service(service, out):
    out.append("service %s {" % service.name)
    for m in service.method:
        out.append("  rpc %s(%s%s) returns (%s%s);" % (
            m.name, "stream " if m.client_streaming else "", m.input_type,
            "stream " if m.server_streaming else "", m.output_type))
    out.append("}")


def read_varint(data, i):
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def descriptor_from_library(data, name):
    """The FileDescriptorProto named `name` among a shared library's bytes.

    A serialized FileDescriptorProto starts with its field 1, the name; its end
    is where the bytes stop being FileDescriptorProto fields (numbers 1 to 14,
    varint or length-delimited), which a NUL or the next blob's bytes do.
    Exactly one copy must parse, with that name, or this fails.
    """
    from google.protobuf import message
    key = b"\n" + bytes([len(name)]) + name.encode()
    found = []
    pos = data.find(key)
    while pos >= 0:
        i = pos
        while i < len(data):
            tag, j = read_varint(data, i)
            number, wire = tag >> 3, tag & 7
            if not 1 <= number <= 14 or wire not in (0, 2):
                break
            if wire == 0:
                _, j = read_varint(data, j)
            else:
                length, j = read_varint(data, j)
                j += length
            i = j
        try:
            fdp = descriptor_pb2.FileDescriptorProto.FromString(data[pos:i])
            if fdp.name == name and (fdp.message_type or fdp.service):
                found.append(fdp)
        except message.DecodeError:
            pass
        pos = data.find(key, pos + 1)
    distinct = {f.SerializeToString() for f in found}
    if len(distinct) != 1:
        sys.exit("%s: %d different descriptors of %s" % (LIBRARY, len(distinct), name))
    return found[0]


def render(fdp, tf_version):
    syntax = fdp.syntax or "proto2"
    out = [
        "// Generated by tools/gen_protos.py from the descriptor of %s" % fdp.name,
        "// shipped in the tensorflow pip package %s. Do not edit." % tf_version,
        "// Field names and numbers are TensorFlow's (they are the wire format);",
        "// file and language options are omitted.",
        'syntax = "%s";' % syntax,
        "",
    ]
    if fdp.package:
        out += ["package %s;" % fdp.package, ""]
    for i, dep in enumerate(fdp.dependency):
        public = "public " if i in fdp.public_dependency else ""
        out.append('import %s"%s";' % (public, dep))
    if fdp.dependency:
        out.append("")
    for msg in fdp.message_type:
        print_message(msg, out, 0, syntax)
        out.append("")
    for enum in fdp.enum_type:
        print_enum(enum, out, 0)
        out.append("")
    for service in fdp.service:
        print_service(service, out)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    import importlib
    import tensorflow as tf
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "proto", "proto")
    seen = {}
    stack = [importlib.import_module(m).DESCRIPTOR for m in ROOT_MODULES]
    while stack:
        fd = stack.pop()
        if fd.name in seen:
            continue
        seen[fd.name] = fd
        stack.extend(fd.dependencies)
    fdps = {name: descriptor_pb2.FileDescriptorProto.FromString(fd.serialized_pb)
            for name, fd in seen.items()}
    with open(os.path.join(os.path.dirname(tf.__file__), LIBRARY), "rb") as f:
        library = f.read()
    for name in LIBRARY_FILES:
        fdps[name] = descriptor_from_library(library, name)
    for name, fdp in fdps.items():
        missing = [d for d in fdp.dependency if d not in fdps]
        if missing:
            sys.exit("%s imports %s, which no root brings in" % (name, ", ".join(missing)))
    for name, fdp in sorted(fdps.items()):
        path = os.path.join(out_dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(render(fdp, tf.__version__))
        print(path, file=sys.stderr)


if __name__ == "__main__":
    main()
