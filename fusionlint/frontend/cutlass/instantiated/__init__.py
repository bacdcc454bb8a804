"""The CUTLASS instantiated reader (with the CUTLASS headers on the include path).

- ``ast_reader``       ``AstReader``: GEMMs read from libclang's specializations of the CUTLASS templates;
- ``template_bodies``  function templates whose bodies do not compile here, reduced to their
                       declarations so that their GEMMs' types are still read.
"""
