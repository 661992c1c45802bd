"""Reference DWARF indexer built on pyelftools' DIE objects (slow, independent).

The package indexes DIEs with its own fast walker (goblueprint.binary.die);
this test helper produces the same indexes the straightforward way so the two
can be compared on real binaries.
"""

from __future__ import annotations

from typing import Any

from goblueprint.binary.dwarf import Dwarf, _str

_TYPE_TAGS = {
    "DW_TAG_structure_type": "struct",
    "DW_TAG_typedef": "typedef",
    "DW_TAG_pointer_type": "pointer",
    "DW_TAG_base_type": "base",
    "DW_TAG_array_type": "array",
    "DW_TAG_subroutine_type": "func",
    "DW_TAG_unspecified_type": "unspecified",
    "DW_TAG_union_type": "union",
    "DW_TAG_interface_type": "interface",
}
_CONST_FORMS = {"DW_FORM_data1", "DW_FORM_data2", "DW_FORM_data4", "DW_FORM_data8", "DW_FORM_udata",
                "DW_FORM_sdata", "DW_FORM_implicit_const"}  # fmt: skip
_LOCAL_REFS = {"DW_FORM_ref1", "DW_FORM_ref2", "DW_FORM_ref4", "DW_FORM_ref8", "DW_FORM_ref_udata"}


def _ref(attr: Any, cu_offset: int) -> int:
    return attr.value + cu_offset if attr.form in _LOCAL_REFS else attr.value


class ReferenceDwarf(Dwarf):
    def _ranges(self, die: Any, cu: Any, cu_base: int) -> list[list[int]]:
        attrs = die.attributes
        if "DW_AT_low_pc" in attrs and "DW_AT_high_pc" in attrs:
            lo = attrs["DW_AT_low_pc"].value
            hi_attr = attrs["DW_AT_high_pc"]
            hi = lo + hi_attr.value if hi_attr.form in _CONST_FORMS else hi_attr.value
            return [[lo, hi]]
        if "DW_AT_ranges" in attrs:
            rl = self.info.range_lists()
            if rl is None:
                return []
            base = cu_base
            out = []
            for entry in rl.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=cu):
                if hasattr(entry, "base_address"):
                    base = entry.base_address
                elif entry.is_absolute:
                    out.append([entry.begin_offset, entry.end_offset])
                else:
                    out.append([base + entry.begin_offset, base + entry.end_offset])
            return out
        return []

    def build_reference(self) -> dict[str, Any]:
        types: dict[str, list] = {}
        type_names: dict[str, str] = {}
        consts: dict[str, list] = {}
        funcs: dict[str, list] = {}
        sub_names: dict[int, str] = {}
        pending_inlines: list[tuple[list, int]] = []
        cus: dict[str, list] = {}
        for cu in self.info.iter_CUs():
            cu_off = cu.cu_offset
            top = cu.get_top_DIE()
            cu_base = top.attributes["DW_AT_low_pc"].value if "DW_AT_low_pc" in top.attributes else 0
            cus[str(cu_off)] = self._ranges(top, cu, cu_base)
            files: list[str] | None = None
            depth = 0
            current: list | None = None  # the concrete subprogram whose children we are in
            current_depth = -1
            inline_depth_base = 0
            array: list | None = None
            struct_rec: list | None = None
            for die in cu.iter_DIEs():
                tag = die.tag
                if tag is None:
                    depth -= 1
                    if current is not None and depth <= current_depth:
                        current = None
                    continue
                attrs = die.attributes
                kind = _TYPE_TAGS.get(tag)
                if kind is not None:
                    name = _str(attrs["DW_AT_name"].value) if "DW_AT_name" in attrs else ""
                    size = attrs["DW_AT_byte_size"].value if "DW_AT_byte_size" in attrs else None
                    target = _ref(attrs["DW_AT_type"], cu_off) if "DW_AT_type" in attrs else None
                    rec = [kind, name, size, target, None]
                    types[str(die.offset)] = rec
                    if name and (name not in type_names or kind != "typedef"):
                        type_names[name] = str(die.offset)
                    struct_rec = rec if kind in ("struct", "union") else None
                    array = rec if kind == "array" else None
                    if struct_rec is not None:
                        rec[4] = []
                elif tag == "DW_TAG_member" and struct_rec is not None:
                    loc = attrs.get("DW_AT_data_member_location")
                    off = loc.value if loc is not None and isinstance(loc.value, int) else 0
                    mtype = _ref(attrs["DW_AT_type"], cu_off) if "DW_AT_type" in attrs else None
                    mname = _str(attrs["DW_AT_name"].value) if "DW_AT_name" in attrs else ""
                    struct_rec[4].append([mname, off, mtype])
                elif tag == "DW_TAG_subrange_type" and array is not None:
                    if "DW_AT_count" in attrs:
                        array[4] = attrs["DW_AT_count"].value
                    elif "DW_AT_upper_bound" in attrs:
                        array[4] = attrs["DW_AT_upper_bound"].value + 1
                elif tag == "DW_TAG_constant":
                    name = _str(attrs["DW_AT_name"].value) if "DW_AT_name" in attrs else ""
                    val = attrs["DW_AT_const_value"].value if "DW_AT_const_value" in attrs else None
                    tref = _ref(attrs["DW_AT_type"], cu_off) if "DW_AT_type" in attrs else None
                    if name and isinstance(val, int):
                        consts[name] = [val, tref]
                elif tag == "DW_TAG_subprogram":
                    name = _str(attrs["DW_AT_name"].value) if "DW_AT_name" in attrs else ""
                    sub_names[die.offset] = name
                    ranges = self._ranges(die, cu, cu_base)
                    if ranges and name:
                        current = [ranges[0][0], ranges[0][1], cu_off, []]
                        funcs.setdefault(name, current)
                        current_depth = depth
                        inline_depth_base = depth + 1
                elif tag == "DW_TAG_inlined_subroutine" and current is not None:
                    if files is None:
                        files = self._file_table(cu)
                    origin = (
                        _ref(attrs["DW_AT_abstract_origin"], cu_off)
                        if "DW_AT_abstract_origin" in attrs
                        else -1
                    )
                    cf = attrs["DW_AT_call_file"].value if "DW_AT_call_file" in attrs else 0
                    cl = attrs["DW_AT_call_line"].value if "DW_AT_call_line" in attrs else 0
                    rec = [origin, self._ranges(die, cu, cu_base), files[cf] if cf < len(files) else "?", cl,
                           depth - inline_depth_base]  # fmt: skip
                    current[3].append(rec)
                    pending_inlines.append((rec, origin))
                if die.has_children:
                    depth += 1
        for rec, origin in pending_inlines:
            rec[0] = sub_names.get(origin, "?")
        # Constants carry their type's name, not a DIE offset, so the index stands alone.
        for name, (val, tref) in list(consts.items()):
            t = types.get(str(tref)) if tref is not None else None
            consts[name] = [val, t[1] if t else ""]
        return {"types": types, "typenames": type_names, "consts": consts, "funcs": funcs, "cus": cus}
