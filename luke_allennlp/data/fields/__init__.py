from luke_allennlp.data.fields.label_array_field import LabelArrayField
from luke_allennlp.data.fields.sourced_label_fields import SourcedLabelField, SourcedMultiLabelField

__all__ = ["LabelArrayField", "SourcedLabelField", "SourcedMultiLabelField"]
